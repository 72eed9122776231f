// PostgreSQL: a cluster initialised (or copied from the initdb cache) under the data directory.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureBinaries, findBinary, findPostgresBinDir, isExecutableFile, isRoot } from './binaries.mjs';
import { launch, readPidFile } from './launch.mjs';
import { LOOPBACK, tryConnect, waitForTcp } from './ports.mjs';
import { isAlive, isServerOf, readLogTail } from './processes.mjs';
import { StackError, tailText } from './stack-error.mjs';

/** uid/gid of `nobody`, which PostgreSQL runs as when we are root (it refuses to run as root). */
function unprivilegedUser(name = 'nobody') {
  try {
    for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [user, , uid, gid] = line.split(':');
      if (user === name) return { name, uid: Number(uid), gid: Number(gid) };
    }
  } catch {
    // fall through
  }
  return { name, uid: 65534, gid: 65534 };
}

/** Adds o+x to every ancestor of `dir` that `uid` could not traverse, so PostgreSQL can reach its data. */
function ensureTraversable(dir, uid, log) {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    const st = fs.statSync(current);
    if (st.uid !== uid && (st.mode & 0o001) === 0) {
      fs.chmodSync(current, (st.mode & 0o7777) | 0o001);
      log?.(
        `note: added o+x to ${current} so PostgreSQL (running as an unprivileged user) can reach its data directory.`,
      );
    }
    if (current === path.dirname(current)) break;
  }
}

function chownTree(dir, uid, gid) {
  fs.chownSync(dir, uid, gid);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) chownTree(full, uid, gid);
    else fs.lchownSync(full, uid, gid);
  }
}

function runAs(command, args, { user, logFile }) {
  const result = spawnSync(command, args, {
    encoding: 'utf8',
    cwd: '/',
    uid: user?.uid,
    gid: user?.gid,
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 16 * 1024 * 1024,
  });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (logFile) fs.appendFileSync(logFile, output);
  return { ok: result.status === 0, output: result.error ? result.error.message : output };
}

function binaryVersionText(binDir) {
  return spawnSync(path.join(binDir, 'postgres'), ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '';
}

function binaryMajorVersion(binDir) {
  const match = /(\d+)(?:\.\d+)?/.exec(binaryVersionText(binDir));
  return match ? match[1] : null;
}

function prepareCluster({ binDir, dataDir, logFile, fsync, user, log, initdbCache }) {
  const versionFile = path.join(dataDir, 'PG_VERSION');
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (user) {
    ensureTraversable(path.dirname(dataDir), user.uid, log);
    const st = fs.statSync(dataDir);
    if (st.uid !== user.uid) chownTree(dataDir, user.uid, user.gid);
  }
  fs.chmodSync(dataDir, 0o700);

  if (fs.existsSync(versionFile)) {
    const clusterVersion = fs.readFileSync(versionFile, 'utf8').trim();
    const binaryVersion = binaryMajorVersion(binDir);
    if (binaryVersion && clusterVersion !== binaryVersion) {
      throw new StackError(
        `${dataDir} holds a PostgreSQL ${clusterVersion} cluster but the installed server is PostgreSQL ${binaryVersion}.\n` +
          'Remove the data (for the stack: `npm run reset`) to start with a fresh cluster.',
      );
    }
    return false;
  }

  // No PG_VERSION: nothing usable here (an interrupted initdb at most), and the directory is ours.
  for (const entry of fs.readdirSync(dataDir)) fs.rmSync(path.join(dataDir, entry), { recursive: true, force: true });
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const args = ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-instructions'];
  if (!fsync) args.push('--no-sync');

  // initdb is most of a test run's start-up time; a pristine cluster copied from a cache is ~5x faster.
  const cached = initdbCache
    ? path.join(
        initdbCache,
        `initdb-${createHash('sha1')
          .update(`${binaryVersionText(binDir)}\0${args.slice(2).join('\0')}`)
          .digest('hex')
          .slice(0, 16)}`,
      )
    : null;
  if (cached && fs.existsSync(path.join(cached, 'PG_VERSION'))) {
    fs.cpSync(cached, dataDir, { recursive: true });
    if (user) chownTree(dataDir, user.uid, user.gid);
    fs.chmodSync(dataDir, 0o700);
    return true;
  }
  const result = runAs(path.join(binDir, 'initdb'), args, { user, logFile });
  if (!result.ok) throw new StackError(`initdb failed for ${dataDir}:`, { logTail: tailText(result.output) });
  if (cached) {
    // Copy next to the cache and rename, so concurrent runs never see half a cluster.
    const tmp = `${cached}.${process.pid}.tmp`;
    try {
      fs.cpSync(dataDir, tmp, { recursive: true });
      fs.renameSync(tmp, cached);
    } catch {
      // another run filled the cache first, or the disk is full: the cache is only an optimisation
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }
  return true;
}

/** A postmaster.pid left by a crash blocks start-up when its pid now belongs to another process. */
function removeStalePostmasterPid(dataDir) {
  const file = path.join(dataDir, 'postmaster.pid');
  const pid = readPidFile(file);
  if (pid === null) return;
  if (isServerOf('postgres', pid, dataDir)) return;
  fs.rmSync(file, { force: true });
}

async function loadPg() {
  try {
    const mod = await import('pg');
    return mod.default ?? mod;
  } catch {
    return null;
  }
}

/** Runs `select 1` through a real connection; true on success. */
async function pgAnswers(pg, url, binDir, host, port) {
  if (pg) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  }
  const isready = [path.join(binDir, 'pg_isready'), findBinary('pg_isready')].find((b) => b && isExecutableFile(b));
  if (isready) {
    return (
      spawnSync(isready, ['-h', host, '-p', String(port), '-U', 'postgres', '-d', 'postgres', '-t', '2']).status === 0
    );
  }
  return tryConnect(host, port);
}

async function waitForPostgres({ url, binDir, host, port, timeoutMs, pid, logFile, logOffset }) {
  const deadline = Date.now() + timeoutMs;
  await waitForTcp(host, port, timeoutMs, { pid, name: 'PostgreSQL', logFile, logOffset });
  const pg = await loadPg();
  let delay = 20;
  for (;;) {
    if (await pgAnswers(pg, url, binDir, host, port)) return;
    if (!isAlive(pid))
      throw new StackError('PostgreSQL exited during start-up.', { logTail: readLogTail(logFile, logOffset) });
    if (Date.now() >= deadline) {
      throw new StackError(
        `PostgreSQL on ${host}:${port} did not accept connections within ${Math.round(timeoutMs / 1000)} s.`,
        {
          logTail: readLogTail(logFile, logOffset),
        },
      );
    }
    await sleep(delay);
    delay = Math.min(delay * 2, 200);
  }
}

/**
 * Starts PostgreSQL on host:port with its cluster in `dataDir` (initdb on first use: user `postgres`,
 * trust authentication, UTF8, no locale). As root it runs as `nobody`, owning the data directory.
 * `fsync: false` trades durability for speed (tests). `settings` adds `-c name=value` options.
 * `initdbCache` names a directory where a pristine cluster is kept and copied instead of running initdb.
 * Resolves to { pid, url, port, reused, initialized } once `select 1` succeeds;
 * url is postgres://postgres@host:port/postgres.
 */
export async function startPostgres({
  port,
  dataDir,
  logFile,
  fsync = true,
  host = LOOPBACK,
  settings = {},
  timeoutMs = 30000,
  onSpawn,
  log,
  initdbCache,
} = {}) {
  const binDir = findPostgresBinDir();
  if (!binDir) ensureBinaries({ install: false, servers: ['postgres'], ffmpeg: false });
  dataDir = path.resolve(dataDir);
  const user = isRoot() ? unprivilegedUser() : undefined;
  const url = `postgres://postgres@${host}:${port}/postgres`;
  let initialized = false;

  const args = ['-D', dataDir, '-p', String(port), '-c', `listen_addresses=${host}`, '-c', 'unix_socket_directories='];
  if (!fsync) args.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  for (const [key, value] of Object.entries(settings)) args.push('-c', `${key}=${value}`);

  const { pid, reused } = await launch('postgres', {
    dataDir,
    port,
    logFile,
    onSpawn,
    label: 'PostgreSQL',
    envVar: 'DATABASE_URL',
    command: path.join(binDir, 'postgres'),
    args,
    prepare: () => {
      initialized = prepareCluster({ binDir, dataDir, logFile, fsync, user, log, initdbCache });
      removeStalePostmasterPid(dataDir);
    },
    // Node switches uid/gid itself right before exec, so the pid we get is the postmaster's
    // (a `runuser` wrapper would stand in between and SIGKILL it 2 s after forwarding SIGTERM).
    spawnOptions: { cwd: '/', uid: user?.uid, gid: user?.gid },
    ready: (p, logOffset) => waitForPostgres({ url, binDir, host, port, timeoutMs, pid: p, logFile, logOffset }),
  });
  return { pid, url, port, reused, initialized };
}

/** Replaces the database of a postgres:// URL. */
export function withDatabase(url, database) {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

/**
 * Creates `database` when it does not exist yet (needs `pg`, i.e. after npm install). Resolves to true when created.
 */
export async function ensureDatabase(adminUrl, database) {
  const pg = await loadPg();
  if (!pg) throw new StackError('The `pg` package is not installed: run `npm install` first.');
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
  client.on('error', () => {});
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (rowCount > 0) return false;
    await client.query(`create database ${quoteIdent(database)}`);
    return true;
  } finally {
    await client.end().catch(() => {});
  }
}

export function quoteIdent(name) {
  return `"${String(name).replaceAll('"', '""')}"`;
}
