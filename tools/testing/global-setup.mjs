// Jest global setup: real NATS, Redis and PostgreSQL (fsync off) on free loopback ports with data
// under .data/test-<jest pid>, so tests never collide with a running `npm start` or another test run.
// A template database `sb_template` holds every app's migrations; tests clone it (createTestDatabase
// in @switchboard/testing). Workers find the servers through SB_TEST_* environment variables.
import fs from 'node:fs';
import path from 'node:path';
import { discoverApps, REPO_ROOT, runMigrations } from '../stack/apps.mjs';
import {
  ensureBinaries,
  freePort,
  isAlive,
  processCommandLine,
  quoteIdent,
  StackError,
  startNats,
  startPostgres,
  startRedis,
  stopRecordedServer,
  stopServer,
  withDatabase,
} from '../stack/servers.mjs';

export const TEMPLATE_DB = 'sb_template';
export const STATE_KEY = Symbol.for('switchboard.testStack');
const TEST_DIR_PATTERN = /^test-(\d+)$/;

export function testDataDir(pid = process.pid) {
  return path.join(REPO_ROOT, '.data', `test-${pid}`);
}

/** Stops the servers of earlier test runs whose jest process is gone, and deletes their data. */
export async function cleanStaleTestDirs({ root = REPO_ROOT } = {}) {
  const base = path.join(root, '.data');
  let entries = [];
  try {
    entries = fs.readdirSync(base);
  } catch {
    return;
  }
  await Promise.all(
    entries.map(async (entry) => {
      const match = TEST_DIR_PATTERN.exec(entry);
      if (!match) return;
      const pid = Number(match[1]);
      if (pid === process.pid) return;
      if (isAlive(pid) && /jest/.test(processCommandLine(pid) ?? '')) return; // a concurrent test run
      const dir = path.join(base, entry);
      await Promise.all(
        ['nats', 'redis', 'postgres'].map((name) =>
          stopRecordedServer(name, path.join(dir, name === 'postgres' ? 'pg' : name), { timeoutMs: 5000 }).catch(
            () => {},
          ),
        ),
      );
      fs.rmSync(dir, { recursive: true, force: true });
    }),
  );
}

function isPortClash(error) {
  return /address already in use|in use by|could not bind|bind: /i.test(`${error.message}\n${error.logTail ?? ''}`);
}

/** Starts a server on a free port, trying another port when one was taken between probing and binding. */
async function onFreePort(start) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await freePort());
    } catch (error) {
      if (attempt >= 3 || !isPortClash(error)) throw error;
    }
  }
}

async function pgClient(url) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  return client;
}

async function createTemplate(adminUrl, servers) {
  const admin = await pgClient(adminUrl);
  try {
    await admin.query(`create database ${quoteIdent(TEMPLATE_DB)}`);
  } finally {
    await admin.end();
  }

  if (process.env.SB_TEST_SKIP_MIGRATIONS !== '1') {
    const apps = discoverApps(REPO_ROOT);
    const env = {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      NATS_URL: servers.nats.url,
      REDIS_URL: servers.redis.url,
      DATABASE_URL: withDatabase(adminUrl, TEMPLATE_DB),
    };
    const skipped = await runMigrations(apps, {
      root: REPO_ROOT,
      env,
      logDir: path.join(servers.dataDir, 'logs'),
      parallel: true,
      unbuilt: 'skip',
    });
    if (skipped.length > 0) {
      console.warn(
        `\nwarning: ${TEMPLATE_DB} lacks the migrations of ${skipped.map((a) => a.service).join(', ')}: ` +
          `${skipped.map((a) => path.relative(REPO_ROOT, a.migrate)).join(', ')} not built (run \`npm run build\`).`,
      );
    }
  }

  // No connections to the template from now on: CREATE DATABASE ... TEMPLATE fails while one is open.
  const again = await pgClient(adminUrl);
  try {
    await again.query(`alter database ${quoteIdent(TEMPLATE_DB)} with is_template true allow_connections false`);
  } finally {
    await again.end();
  }
}

async function stopAll(servers, dataDir) {
  await Promise.all(
    Object.entries(servers).map(([name, server]) =>
      stopServer(name, server.pid, {
        dataDir: path.join(dataDir, name === 'postgres' ? 'pg' : name),
        timeoutMs: 5000,
      }).catch(() => {}),
    ),
  );
}

export default async function globalSetup() {
  const started = Date.now();
  const phases = [];
  const mark = (name) => phases.push(`${name} ${Date.now() - started} ms`);
  await cleanStaleTestDirs();
  mark('cleanup');

  try {
    ensureBinaries({ install: false, ffmpeg: false, log: () => {} });
  } catch (error) {
    throw withoutStack(
      new StackError(
        `The integration tests need real servers. ${error.message}\n(\`npm test\` runs \`node tools/stack/cli.mjs ensure-servers\` first, which installs them as root.)`,
      ),
    );
  }

  const dataDir = testDataDir();
  fs.rmSync(dataDir, { recursive: true, force: true });
  const logs = path.join(dataDir, 'logs');
  fs.mkdirSync(logs, { recursive: true });

  const starters = {
    nats: () =>
      onFreePort((port) =>
        startNats({ port, dataDir: path.join(dataDir, 'nats'), logFile: path.join(logs, 'nats.log') }),
      ),
    redis: () =>
      onFreePort((port) =>
        startRedis({
          port,
          dataDir: path.join(dataDir, 'redis'),
          logFile: path.join(logs, 'redis.log'),
          persist: false,
        }),
      ),
    postgres: () =>
      onFreePort((port) =>
        startPostgres({
          port,
          dataDir: path.join(dataDir, 'pg'),
          logFile: path.join(logs, 'postgres.log'),
          fsync: false,
          settings: { max_connections: 300 },
          initdbCache: path.join(REPO_ROOT, '.data', 'test-cache'),
        }),
      ),
  };
  const names = Object.keys(starters);
  const settled = await Promise.allSettled(names.map((name) => starters[name]()));
  mark('servers');
  const servers = {};
  names.forEach((name, i) => {
    if (settled[i].status === 'fulfilled') servers[name] = settled[i].value;
  });

  try {
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    await createTemplate(servers.postgres.url, { ...servers, dataDir });
    mark('template');
  } catch (error) {
    await stopAll(servers, dataDir);
    if (process.env.SB_TEST_KEEP_DATA !== '1') fs.rmSync(dataDir, { recursive: true, force: true });
    throw withoutStack(error);
  }

  Object.assign(process.env, {
    SB_TEST_NATS_URL: servers.nats.url,
    SB_TEST_REDIS_URL: servers.redis.url,
    SB_TEST_PG_URL: servers.postgres.url,
    SB_TEST_TEMPLATE_DB: TEMPLATE_DB,
    SB_TEST_DATA_DIR: dataDir,
  });
  const state = { dataDir, pids: Object.fromEntries(Object.entries(servers).map(([name, s]) => [name, s.pid])) };
  globalThis[STATE_KEY] = state;
  fs.writeFileSync(path.join(dataDir, 'state.json'), `${JSON.stringify(state, null, 2)}\n`);
  if (process.env.SB_TEST_VERBOSE === '1') {
    console.log(
      `\ntest servers up (${phases.join(', ')}): ${servers.nats.url} ${servers.redis.url} ${servers.postgres.url}`,
    );
  }
}

/** Jest prints a thrown error's stack; for an expected failure the message (and log tail) is what helps. */
function withoutStack(error) {
  if (!(error instanceof StackError)) return error;
  const text = error.logTail
    ? `${error.message}\n${error.logTail
        .split('\n')
        .map((l) => `  │ ${l}`)
        .join('\n')}`
    : error.message;
  error.stack = text;
  error.message = text;
  return error;
}
