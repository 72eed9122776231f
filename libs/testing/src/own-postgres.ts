import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { testServers, type TestDatabase } from './servers.js';
import { freePort, repoRoot } from './service.js';

export interface OwnPostgres {
  /** Admin URL to the `postgres` database (user postgres, trust authentication). */
  url: string;
  /**
   * Creates `database` with the migrations of `services` applied (e.g. `['webhook-worker']`). Its
   * `drop` does nothing: the database goes with the server's data, removed after the run.
   */
  createDatabase(database: string, services: string[]): Promise<TestDatabase>;
  /**
   * Crashes the server: an immediate shutdown (SIGQUIT), every PostgreSQL process exits at once
   * without a checkpoint; `start` then recovers from the WAL.
   */
  crash(): Promise<void>;
  /** Starts it again on the same port and data directory. */
  start(): Promise<void>;
  /** Stops it cleanly (its data goes with the run's data directory). Safe to call twice. */
  stop(): Promise<void>;
}

interface StackServers {
  startPostgres(options: {
    port: number;
    dataDir: string;
    logFile: string;
    initdbCache?: string;
  }): Promise<{ pid: number; url: string }>;
  stopServer(name: string, pid: number, options?: { dataDir?: string }): Promise<boolean>;
  stopPid(pid: number, options?: { signal?: NodeJS.Signals }): Promise<boolean>;
  ensureDatabase(adminUrl: string, database: string): Promise<boolean>;
  withDatabase(url: string, database: string): string;
}

interface StackApps {
  discoverApps(): Array<{ service: string; migrate: string | null }>;
  runMigrations(
    apps: Array<{ service: string; migrate: string | null }>,
    options: { env: NodeJS.ProcessEnv },
  ): Promise<unknown>;
}

/**
 * A PostgreSQL server of the test's own, for tests that crash and restart it while services run
 * (the run's shared server serves every other suite). Unlike the shared one it runs with fsync and
 * synchronous commits on, so a commit a service was told about survives a crash. Its data lives
 * under the run's data directory, in a directory of its own: the launcher keeps a server's pid file
 * beside its data directory, and the shared servers keep theirs in the run's data directory.
 */
export async function startOwnPostgres(label: string): Promise<OwnPostgres> {
  const servers = (await import(pathToFileURL(path.join(repoRoot(), 'tools/stack/servers.mjs')).href)) as StackServers;
  const apps = (await import(pathToFileURL(path.join(repoRoot(), 'tools/stack/apps.mjs')).href)) as StackApps;
  const port = await freePort();
  const dir = path.join(testServers().dataDir, `${label}-pg-${port}`);
  const dataDir = path.join(dir, 'data');
  const launch = () =>
    servers.startPostgres({
      port,
      dataDir,
      logFile: path.join(dir, 'postgres.log'),
      initdbCache: path.join(repoRoot(), '.data', 'test-cache'),
    });
  let server: { pid: number; url: string } | null = await launch();
  const { url } = server;
  return {
    url,
    async createDatabase(database, services) {
      await servers.ensureDatabase(url, database);
      const databaseUrl = servers.withDatabase(url, database);
      const wanted = apps.discoverApps().filter((a) => services.includes(a.service));
      if (wanted.length !== services.length) throw new Error(`unknown services among ${services.join(', ')}`);
      await apps.runMigrations(wanted, { env: { ...process.env, DATABASE_URL: databaseUrl } });
      return { name: database, url: databaseUrl, drop: async () => undefined };
    },
    async crash() {
      if (!server) return;
      await servers.stopPid(server.pid, { signal: 'SIGQUIT' });
      server = null;
    },
    async start() {
      if (!server) server = await launch();
    },
    async stop() {
      if (!server) return;
      await servers.stopServer('postgres', server.pid, { dataDir });
      server = null;
    },
  };
}
