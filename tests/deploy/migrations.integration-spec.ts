/**
 * A service started on a database its migrations have not reached is not ready: /readyz answers 503
 * naming the pending migrations (before, it answered 200 and every query then failed with 500), and
 * 200 once its migrate command ran. This is what keeps a new version's pods out of the Service
 * until their schema is there (k8s/: each Deployment also migrates in an init container).
 * Each service that owns a schema, on an empty database of its own; real NATS, Redis, PostgreSQL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import {
  findApp,
  flushRedisPrefix,
  freePort,
  quoteIdent,
  repoRoot,
  serviceTestEnv,
  testNamespace,
  testServers,
  waitFor,
  withDatabase,
} from '@switchboard/testing';

const SERVICES = ['management-api', 'recording-service', 'usage-aggregator', 'webhook-worker'];

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: testServers().pgUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Runs a node script of the repository to its end; resolves to its exit code and output. */
function runScript(script: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], {
      cwd: repoRoot(),
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe.each(SERVICES)('%s on an unmigrated database', (name) => {
  const app = findApp(name);
  const ns = testNamespace(`mig_${name}`);
  const database = `t_unmigrated_${ns}`;
  const databaseUrl = withDatabase(testServers().pgUrl, database);
  const scratch = path.join(testServers().dataDir, ns);
  let child: ChildProcess | undefined;
  let output = '';

  beforeAll(async () => {
    await admin((c) => c.query(`CREATE DATABASE ${quoteIdent(database)}`));
    fs.mkdirSync(scratch, { recursive: true });
  });

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    await admin((c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(database)} WITH (FORCE)`));
    await flushRedisPrefix(testServers().redisUrl, `${ns}:`);
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('answers /readyz 503 naming its pending migrations, then 200 once migrated', async () => {
    expect(app.migrate).not.toBeNull();
    const port = await freePort();
    const env = {
      ...serviceTestEnv(ns, databaseUrl),
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(port),
      RECORDINGS_DIR: path.join(scratch, 'work'),
      RECORDINGS_STORAGE_DIR: path.join(scratch, 'storage'),
      RECORDINGS_URL_SECRET: 'migrations-spec-recordings-url-secret-0123456789',
    };
    child = spawn(process.execPath, [app.main], {
      cwd: repoRoot(),
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString('utf8')));
    const readyz = async () => {
      if (child!.exitCode !== null || child!.signalCode !== null)
        throw new Error(`${name} exited (${child!.exitCode ?? child!.signalCode}): ${output.slice(-4000)}`);
      const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(3000) });
      return { status: res.status, body: (await res.json()) as { checks: Record<string, string> } };
    };

    // Up and answering, its other dependencies reachable: only the schema is missing.
    const before = await waitFor(
      async () => {
        const r = await readyz();
        return Object.entries(r.body.checks).every(([check, v]) => check === 'postgres' || v === 'ok') ? r : undefined;
      },
      { timeoutMs: 30000, intervalMs: 100, description: `${name} answering /readyz with only postgres failing` },
    );
    expect(before.status).toBe(503);
    expect(before.body.checks.postgres).toMatch(/^failed: \d+ migrations? pending: /);

    const migrated = await runScript(app.migrate!, { DATABASE_URL: databaseUrl });
    expect(migrated).toEqual({ code: 0, output: expect.stringContaining(`${name}: applied `) });
    // Every migration the run applied was named as pending.
    const applied = /applied (.*)/.exec(migrated.output)![1]!.split(', ');
    expect(applied.length).toBeGreaterThan(0);
    for (const migration of applied) expect(before.body.checks.postgres).toContain(migration);

    const after = await waitFor(async () => ((await readyz()).status === 200 ? readyz() : undefined), {
      timeoutMs: 30000,
      intervalMs: 100,
      description: `${name} ready after migrating`,
    });
    expect(after.body.checks.postgres).toBe('ok');
  });
});
