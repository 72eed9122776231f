// The stack's own NATS, Redis and PostgreSQL on fixed ports, or the external ones the URL variables name.
import path from 'node:path';
import {
  ensureDatabase,
  StackError,
  startNats,
  startPostgres,
  startRedis,
  stopServer,
  withDatabase,
} from './servers.mjs';
import { EXTERNAL_ENV, SERVER_LABELS, SERVER_NAMES, STACK_DATABASE, STACK_PORTS } from './stack-state.mjs';

/** External servers named by NATS_URL / REDIS_URL / DATABASE_URL. */
export function externalServers(env = process.env) {
  return Object.fromEntries(SERVER_NAMES.map((name) => [name, env[EXTERNAL_ENV[name]] || null]));
}

/**
 * Starts the stack's NATS, Redis and PostgreSQL (those without an external URL) in parallel on their
 * fixed ports with data under .data/stack, and creates the `switchboard` database.
 * Resolves to { urls: { nats, redis, database }, pids: { nats?, redis?, postgres? } }.
 * When one fails, the others are stopped again before it throws.
 */
export async function startServers({
  paths,
  external = externalServers(),
  fsync = true,
  log = console.log,
  onSpawn,
} = {}) {
  const logFile = (name) => path.join(paths.logs, `${name}.log`);
  const starters = {
    nats: () =>
      startNats({
        port: STACK_PORTS.nats,
        dataDir: paths.dataDirs.nats,
        logFile: logFile('nats'),
        onSpawn: (pid) => onSpawn?.('nats', pid),
      }),
    redis: () =>
      startRedis({
        port: STACK_PORTS.redis,
        dataDir: paths.dataDirs.redis,
        logFile: logFile('redis'),
        onSpawn: (pid) => onSpawn?.('redis', pid),
      }),
    postgres: () =>
      startPostgres({
        port: STACK_PORTS.postgres,
        dataDir: paths.dataDirs.postgres,
        logFile: logFile('postgres'),
        fsync,
        log,
        onSpawn: (pid) => onSpawn?.('postgres', pid),
      }),
  };
  const own = SERVER_NAMES.filter((name) => !external[name]);
  for (const name of SERVER_NAMES) {
    if (external[name]) log(`Using the ${SERVER_LABELS[name]} server from ${EXTERNAL_ENV[name]}.`);
  }
  const settled = await Promise.allSettled(own.map((name) => starters[name]()));
  const started = {};
  own.forEach((name, i) => {
    if (settled[i].status === 'fulfilled') started[name] = settled[i].value;
  });
  const failure = settled.find((s) => s.status === 'rejected');
  if (failure) {
    await stopOwnServers(started, paths);
    throw failure.reason;
  }
  for (const name of own) {
    const s = started[name];
    log(`${SERVER_LABELS[name].padEnd(10)} ${s.reused ? 'already running' : 'started'} (pid ${s.pid}) on ${s.url}`);
  }

  let database = external.postgres;
  if (started.postgres) {
    try {
      if (await ensureDatabase(started.postgres.url, STACK_DATABASE)) log(`Created database ${STACK_DATABASE}.`);
    } catch (error) {
      await stopOwnServers(started, paths);
      throw error instanceof StackError
        ? error
        : new StackError(`Could not create database ${STACK_DATABASE}: ${error.message}`);
    }
    database = withDatabase(started.postgres.url, STACK_DATABASE);
  }
  return {
    urls: { nats: external.nats ?? started.nats.url, redis: external.redis ?? started.redis.url, database },
    pids: Object.fromEntries(own.map((name) => [name, started[name].pid])),
  };
}

async function stopOwnServers(started, paths) {
  for (const name of ['postgres', 'redis', 'nats']) {
    if (started[name]) await stopServer(name, started[name].pid, { dataDir: paths.dataDirs[name] }).catch(() => {});
  }
}
