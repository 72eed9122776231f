// Local NATS, Redis and PostgreSQL servers for the stack launcher and the jest global setup.
//
// Plain Node built-ins only: this runs before `npm install`. `pg` is imported lazily, and only to
// check that PostgreSQL accepts connections (pg_isready is the fallback when it is not installed).
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** An expected failure: the CLI prints its message (and log tail) without a stack trace. */
export class StackError extends Error {
  constructor(message, { logTail, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'StackError';
    this.expected = true;
    if (logTail) this.logTail = logTail;
  }
}

export const LOOPBACK = '127.0.0.1';

/** How each server shuts down cleanly. SIGINT is PostgreSQL's "fast" shutdown; its SIGTERM waits for clients. */
export const STOP_SIGNALS = Object.freeze({ nats: 'SIGTERM', redis: 'SIGTERM', postgres: 'SIGINT' });

const PROGRAMS = Object.freeze({ nats: 'nats-server', redis: 'redis-server', postgres: 'postgres' });

// ---------------------------------------------------------------------------------------------
// Binaries

const EXTRA_BIN_DIRS = ['/usr/local/sbin', '/usr/sbin', '/sbin'];

function isExecutableFile(file) {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** /usr/lib/postgresql/<version>/bin directories, newest version first. */
function postgresVersionDirs() {
  let versions;
  try {
    versions = fs.readdirSync('/usr/lib/postgresql');
  } catch {
    return [];
  }
  return versions
    .filter((v) => /^\d+(\.\d+)?$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => `/usr/lib/postgresql/${v}/bin`);
}

/**
 * Absolute path of an executable found on PATH, in the sbin directories or in /usr/lib/postgresql/*\/bin; null if none.
 */
export function findBinary(name) {
  const dirs = [
    ...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean),
    ...EXTRA_BIN_DIRS,
    ...postgresVersionDirs(),
  ];
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/**
 * The directory that holds both `initdb` and `postgres` of one PostgreSQL version. initdb on PATH is
 * usually a symlink into /usr/lib/postgresql/<v>/bin, so resolve it to keep both from the same version.
 */
export function findPostgresBinDir() {
  const candidates = [];
  const initdb = findBinary('initdb');
  if (initdb) candidates.push(path.dirname(fs.realpathSync(initdb)));
  candidates.push(...postgresVersionDirs());
  for (const dir of candidates) {
    if (isExecutableFile(path.join(dir, 'initdb')) && isExecutableFile(path.join(dir, 'postgres'))) return dir;
  }
  return null;
}

const REQUIREMENTS = {
  nats: {
    what: 'nats-server',
    pkg: 'nats-server',
    env: 'NATS_URL',
    example: 'nats://host:4222',
    find: () => findBinary('nats-server'),
  },
  redis: {
    what: 'redis-server',
    pkg: 'redis-server',
    env: 'REDIS_URL',
    example: 'redis://host:6379',
    find: () => findBinary('redis-server'),
  },
  postgres: {
    what: 'PostgreSQL (initdb, postgres)',
    pkg: 'postgresql',
    env: 'DATABASE_URL',
    example: 'postgres://user:password@host:5432/switchboard',
    find: findPostgresBinDir,
  },
};

let aptUpdated = false;

function isRoot() {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

function runApt(args) {
  const result = spawnSync('apt-get', args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    maxBuffer: 64 * 1024 * 1024,
  });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  return { ok: result.status === 0, output: result.error ? String(result.error.message) : output };
}

function tailText(text, lines = 20) {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/**
 * Makes sure the server binaries exist. When some are missing and we are root with `install`, installs
 * them with apt-get (running `apt-get update` once). Otherwise throws a StackError that says what to
 * install or which URL variable points at an existing server instead.
 *
 * `servers` limits the check (e.g. when NATS_URL names an external server). ffmpeg is best-effort:
 * installed when possible, never fatal.
 */
export function ensureBinaries({
  install = false,
  servers = ['nats', 'redis', 'postgres'],
  ffmpeg = true,
  log = console.log,
} = {}) {
  const found = () => Object.fromEntries(servers.map((s) => [s, REQUIREMENTS[s].find()]));
  let paths = found();
  let missing = servers.filter((s) => !paths[s]);
  const wantFfmpeg = ffmpeg && !findBinary('ffmpeg');

  if (missing.length > 0) {
    const packages = missing.map((s) => REQUIREMENTS[s].pkg);
    if (!install || !isRoot()) {
      const how = isRoot()
        ? `Install ${missing.length > 1 ? 'them' : 'it'} with \`node tools/stack/cli.mjs ensure-servers\` or \`apt-get install ${packages.join(' ')}\``
        : `Install ${missing.length > 1 ? 'them' : 'it'} as root: \`sudo apt-get install ${packages.join(' ')}\``;
      const external = missing.map((s) => `${REQUIREMENTS[s].env}=${REQUIREMENTS[s].example}`).join(' ');
      throw new StackError(
        `Missing ${missing.map((s) => REQUIREMENTS[s].what).join(', ')}.\n` +
          `${how}\n` +
          `or use servers you already run by setting ${external}`,
      );
    }
    aptInstall(packages, log);
    paths = found();
    missing = servers.filter((s) => !paths[s]);
    if (missing.length > 0) {
      throw new StackError(
        `apt-get install finished but ${missing.map((s) => REQUIREMENTS[s].what).join(', ')} still cannot be found ` +
          `(looked on PATH, in /usr/sbin and /usr/lib/postgresql/*/bin).`,
      );
    }
  }

  if (wantFfmpeg && install && isRoot()) {
    try {
      aptInstall(['ffmpeg'], log);
    } catch (error) {
      log(`warning: ffmpeg could not be installed (${error.message.split('\n')[0]}); recordings will not be muxed.`);
    }
  } else if (wantFfmpeg) {
    log('note: ffmpeg is not installed; recordings will not be muxed (apt-get install ffmpeg).');
  }

  return {
    nats: paths.nats ?? null,
    redis: paths.redis ?? null,
    postgresBinDir: paths.postgres ?? null,
    ffmpeg: findBinary('ffmpeg'),
  };
}

export function aptInstall(packages, log) {
  if (!findBinary('apt-get')) {
    throw new StackError(
      `${packages.join(', ')} missing and apt-get is not available on this machine: install ${packages.join(', ')} by hand.`,
    );
  }
  if (!aptUpdated) {
    log('Running apt-get update…');
    const update = runApt(['update']);
    if (!update.ok) throw new StackError(`apt-get update failed:\n${tailText(update.output)}`);
    aptUpdated = true;
  }
  log(`Installing ${packages.join(' ')} with apt-get…`);
  const result = runApt(['install', '-y', '--no-install-recommends', ...packages]);
  if (!result.ok) throw new StackError(`apt-get install ${packages.join(' ')} failed:\n${tailText(result.output)}`);
}

// ---------------------------------------------------------------------------------------------
// Ports

const handedOut = new Set();

/** A TCP port that is free on the loopback interface right now (never the same one twice per process). */
export async function freePort(host = LOOPBACK) {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await new Promise((resolve, reject) => {
      const server = net.createServer();
      server.unref();
      server.once('error', reject);
      server.listen(0, host, () => {
        const { port: p } = server.address();
        server.close(() => resolve(p));
      });
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new StackError('Could not find a free TCP port.');
}

/** Whether something else already holds `port` (we could not bind it ourselves). */
export function isPortInUse(port, host = LOOPBACK) {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', (error) =>
      error.code === 'EADDRINUSE' || error.code === 'EACCES' ? resolve(true) : reject(error),
    );
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(false)));
  });
}

function tryConnect(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok) => {
      socket.removeAllListeners();
      socket.on('error', () => {});
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Resolves once host:port accepts TCP connections. With `pid`, fails as soon as that process dies
 * (with the tail of `logFile` read from `logOffset` on) instead of waiting for the timeout.
 */
export async function waitForTcp(host, port, timeoutMs = 10000, { pid, name, logFile, logOffset } = {}) {
  const label = name ?? `${host}:${port}`;
  const deadline = Date.now() + timeoutMs;
  let delay = 10;
  for (;;) {
    if (await tryConnect(host, port)) return;
    if (pid !== undefined && !isAlive(pid)) {
      throw new StackError(`${label} exited during start-up.`, {
        logTail: logFile ? readLogTail(logFile, logOffset) : undefined,
      });
    }
    if (Date.now() >= deadline) {
      throw new StackError(
        `${label} did not accept connections on ${host}:${port} within ${Math.round(timeoutMs / 1000)} s.`,
        {
          logTail: logFile ? readLogTail(logFile, logOffset) : undefined,
        },
      );
    }
    await sleep(delay);
    delay = Math.min(delay * 2, 100);
  }
}

/** Inodes of sockets listening on `port` (IPv4 and IPv6), from /proc/net. */
function listeningInodes(port) {
  const inodes = new Set();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text;
    try {
      text = fs.readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || cols[3] !== '0A') continue; // 0A = LISTEN
      if (Number.parseInt(cols[1].split(':')[1], 16) === port) inodes.add(cols[9]);
    }
  }
  return inodes;
}

function pidHoldsSocket(pid, inodes) {
  let fds;
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      const target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith('socket:[') && inodes.has(target.slice(8, -1))) return true;
    } catch {
      // fd closed while we looked
    }
  }
  return false;
}

/** Processes listening on `port`, best effort from /proc: [{ pid, command }]. Empty when unknown. */
export function portOwners(port) {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return [];
  let pids;
  try {
    pids = fs
      .readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map(Number);
  } catch {
    return [];
  }
  return pids
    .filter((pid) => pidHoldsSocket(pid, inodes))
    .map((pid) => ({ pid, command: processCommandLine(pid) ?? '?' }));
}

/** Whether process `pid` listens on `port` (false when /proc cannot tell). */
export function pidListensOn(pid, port) {
  const inodes = listeningInodes(port);
  return inodes.size > 0 && pidHoldsSocket(pid, inodes);
}

export function describePortOwners(port) {
  const owners = portOwners(port);
  if (owners.length === 0) return 'another process';
  return owners.map((o) => `pid ${o.pid} (${truncate(o.command, 80)})`).join(', ');
}

function truncate(text, max) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

async function assertPortFree(port, label, envVar) {
  if (await isPortInUse(port)) {
    throw new StackError(
      `Port ${port} on ${LOOPBACK}, needed for ${label}, is already in use by ${describePortOwners(port)}.\n` +
        `Stop that process${envVar ? `, or set ${envVar} to use an existing server instead` : ''}.`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Processes

function procStatFields(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces and parentheses: fields start after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** Whether `pid` is a live process. Zombies count as dead: PID 1 here does not always reap orphans. */
export function isAlive(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if (error.code !== 'EPERM') return false;
  }
  const state = procStatFields(pid)?.[0];
  return state !== 'Z' && state !== 'X';
}

/** The command line of `pid` with arguments joined by spaces, or null. */
export function processCommandLine(pid) {
  try {
    const raw = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    const text = raw.replace(/\0+$/, '').split('\0').join(' ').trim();
    return text || null;
  } catch {
    return null;
  }
}

/** Whether `pid` is alive and its command line contains every one of `needles`. */
export function processMatches(pid, ...needles) {
  if (!isAlive(pid)) return false;
  const cmd = processCommandLine(pid);
  return cmd !== null && needles.every((n) => cmd.includes(n));
}

/** Whether `pid` runs `program` (compared by executable name; Redis rewrites its title to "redis-server host:port"). */
export function isSameProgram(pid, program) {
  if (!isAlive(pid)) return false;
  const cmd = processCommandLine(pid);
  if (!cmd) return false;
  const first = cmd.split(' ')[0];
  return path.basename(first) === program;
}

function realpathOrSelf(file) {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}

/**
 * Whether `pid` is the `name` server (nats, redis, postgres) that works on `dataDir`: the same program,
 * with the directory on its command line (NATS, PostgreSQL) or as its working directory (Redis
 * rewrites its command line, but runs inside --dir). A pid reused by anything else does not match.
 */
export function isServerOf(name, pid, dataDir) {
  if (!isSameProgram(pid, PROGRAMS[name])) return false;
  const dir = path.resolve(dataDir);
  if (processCommandLine(pid)?.includes(dir)) return true;
  try {
    return realpathOrSelf(fs.readlinkSync(`/proc/${pid}/cwd`)) === realpathOrSelf(dir);
  } catch {
    return false;
  }
}

async function waitUntilDead(pid, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let delay = 10;
  while (isAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(delay);
    delay = Math.min(delay * 2, 100);
  }
  return true;
}

function signal(pid, sig) {
  try {
    process.kill(pid, sig);
    return true;
  } catch (error) {
    if (error.code === 'ESRCH') return false;
    throw error;
  }
}

/**
 * Stops `pid`: sends `signal` (SIGTERM by default), waits up to `timeoutMs`, then SIGKILLs it (and its
 * process group when it leads one, so that children of a detached server go too). Resolves to true when
 * the process was running, false when it was already gone.
 */
export async function stopPid(pid, { timeoutMs = 10000, signal: sig = 'SIGTERM' } = {}) {
  if (!isAlive(pid)) return false;
  const leadsGroup = Number(procStatFields(pid)?.[2]) === pid;
  if (!signal(pid, sig)) return false;
  if (await waitUntilDead(pid, timeoutMs)) return true;
  try {
    process.kill(leadsGroup ? -pid : pid, 'SIGKILL');
  } catch {
    // it exited between the check and the kill
  }
  if (!(await waitUntilDead(pid, 5000))) {
    throw new StackError(`Process ${pid} did not exit even after SIGKILL.`);
  }
  return true;
}

/** Stops a server started by this module with the signal that shuts it down cleanly. */
export async function stopServer(name, pid, { timeoutMs = 15000, dataDir } = {}) {
  const stopped = await stopPid(pid, { timeoutMs, signal: STOP_SIGNALS[name] ?? 'SIGTERM' });
  if (dataDir) removePidFile(name, dataDir, pid);
  return stopped;
}

function fileSize(file) {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/** The last `lines` lines of a log file written since byte `offset`. */
export function readLogTail(file, offset = 0, lines = 30) {
  let text;
  try {
    const size = fileSize(file);
    const start = Math.max(offset, size - 64 * 1024);
    const fd = fs.openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(Math.max(0, size - start));
      fs.readSync(fd, buffer, 0, buffer.length, start);
      text = buffer.toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '';
  }
  return tailText(text, lines);
}

/**
 * Spawns a detached process (its own process group, so a terminal Ctrl-C does not reach it; the
 * launcher stops it in order) with stdout and stderr appended to `logFile`.
 * Resolves to { pid, child, logOffset }; rejects when the program cannot be executed.
 */
export async function spawnDetached(command, args, { logFile, env = process.env, cwd, uid, gid } = {}) {
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const logOffset = fileSize(logFile);
  const fd = fs.openSync(logFile, 'a');
  let child;
  try {
    child = spawn(command, args, { detached: true, stdio: ['ignore', fd, fd], env, cwd, uid, gid });
  } finally {
    fs.closeSync(fd);
  }
  if (child.pid === undefined) {
    const [error] = await once(child, 'error');
    throw new StackError(`Could not start ${command}: ${error.message}`);
  }
  child.on('error', () => {});
  child.unref();
  return { pid: child.pid, child, logOffset };
}

// ---------------------------------------------------------------------------------------------
// PID files: <dataDir>/../<name>.pid lets a restart find (and reuse) a server left running.

export function pidFilePath(name, dataDir) {
  return path.join(path.dirname(path.resolve(dataDir)), `${name}.pid`);
}

export function readPidFile(file) {
  try {
    const pid = Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function writePidFile(name, dataDir, pid) {
  fs.writeFileSync(pidFilePath(name, dataDir), `${pid}\n`);
}

function removePidFile(name, dataDir, pid) {
  const file = pidFilePath(name, dataDir);
  if (pid === undefined || readPidFile(file) === pid) fs.rmSync(file, { force: true });
}

/**
 * The pid of a server of ours from an earlier run that can be reused: alive, the same program, and
 * listening on `port`. A live one on another port is stopped; a stale PID file is removed.
 */
async function adoptRunning(name, dataDir, port) {
  const file = pidFilePath(name, dataDir);
  const pid = readPidFile(file);
  if (pid === null) return null;
  if (!isServerOf(name, pid, dataDir)) {
    fs.rmSync(file, { force: true });
    return null;
  }
  if (pidListensOn(pid, port)) return pid;
  await stopServer(name, pid, { dataDir });
  return null;
}

/** Stops the server recorded in `<dataDir>/../<name>.pid` if it is still running. */
export async function stopRecordedServer(name, dataDir, options = {}) {
  const pid = readPidFile(pidFilePath(name, dataDir));
  if (pid === null) return false;
  if (!isServerOf(name, pid, dataDir)) {
    removePidFile(name, dataDir);
    return false;
  }
  return stopServer(name, pid, { ...options, dataDir });
}

function requireBinary(name) {
  const bin = findBinary(name);
  if (!bin) ensureBinaries({ install: false, servers: [name === 'nats-server' ? 'nats' : 'redis'], ffmpeg: false });
  return bin;
}

async function launch(
  name,
  { dataDir, port, command, args, logFile, label, envVar, onSpawn, spawnOptions, prepare, ready },
) {
  const reused = await adoptRunning(name, dataDir, port);
  if (reused !== null) {
    onSpawn?.(reused);
    await ready(reused, fileSize(logFile));
    return { pid: reused, reused: true };
  }
  await assertPortFree(port, label, envVar);
  await prepare?.();
  const { pid, logOffset } = await spawnDetached(command, args, { logFile, ...spawnOptions });
  writePidFile(name, dataDir, pid);
  onSpawn?.(pid);
  try {
    await ready(pid, logOffset);
  } catch (error) {
    await stopServer(name, pid, { dataDir, timeoutMs: 5000 }).catch(() => {});
    throw error;
  }
  return { pid, reused: false };
}

// ---------------------------------------------------------------------------------------------
// NATS

/**
 * Starts nats-server with JetStream on host:port, storing streams under `<dataDir>/jetstream`.
 * Resolves to { pid, url, port, reused } once the port accepts connections.
 */
export async function startNats({ port, dataDir, logFile, host = LOOPBACK, timeoutMs = 15000, onSpawn } = {}) {
  const bin = requireBinary('nats-server');
  dataDir = path.resolve(dataDir);
  fs.mkdirSync(path.join(dataDir, 'jetstream'), { recursive: true });
  const { pid, reused } = await launch('nats', {
    dataDir,
    port,
    logFile,
    onSpawn,
    label: 'NATS',
    envVar: 'NATS_URL',
    command: bin,
    args: ['-a', host, '-p', String(port), '-js', '-sd', path.join(dataDir, 'jetstream')],
    ready: (p, logOffset) => waitForTcp(host, port, timeoutMs, { pid: p, name: 'NATS', logFile, logOffset }),
  });
  return { pid, url: `nats://${host}:${port}`, port, reused };
}

// ---------------------------------------------------------------------------------------------
// Redis

/** One PING over a raw socket: resolves to the first reply line, or null on any failure. */
function redisPing(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    let reply = '';
    const done = (value) => {
      socket.removeAllListeners();
      socket.on('error', () => {});
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(timeoutMs, () => done(null));
    socket.once('error', () => done(null));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      const end = reply.indexOf('\r\n');
      if (end >= 0) done(reply.slice(0, end));
    });
  });
}

async function waitForRedis(host, port, timeoutMs, details) {
  const deadline = Date.now() + timeoutMs;
  await waitForTcp(host, port, timeoutMs, details);
  // While Redis replays its append-only file it accepts connections but answers -LOADING.
  for (;;) {
    const reply = await redisPing(host, port);
    if (reply === '+PONG') return;
    if (details.pid !== undefined && !isAlive(details.pid)) {
      throw new StackError('Redis exited during start-up.', {
        logTail: readLogTail(details.logFile, details.logOffset),
      });
    }
    if (Date.now() >= deadline) {
      throw new StackError(
        `Redis on ${host}:${port} did not answer PING within ${Math.round(timeoutMs / 1000)} s (last reply: ${reply ?? 'none'}).`,
        {
          logTail: readLogTail(details.logFile, details.logOffset),
        },
      );
    }
    await sleep(50);
  }
}

/**
 * Starts redis-server on host:port with its files in `dataDir`: append-only file with fsync every
 * second and no RDB snapshots (`persist: false` turns the AOF off too, for tests).
 * Resolves to { pid, url, port, reused } once it answers PING.
 */
export async function startRedis({
  port,
  dataDir,
  logFile,
  host = LOOPBACK,
  persist = true,
  timeoutMs = 15000,
  onSpawn,
} = {}) {
  const bin = requireBinary('redis-server');
  dataDir = path.resolve(dataDir);
  fs.mkdirSync(dataDir, { recursive: true });
  const args = [
    '--bind',
    host,
    '--port',
    String(port),
    '--dir',
    dataDir,
    '--daemonize',
    'no',
    '--logfile',
    '',
    '--appendonly',
    persist ? 'yes' : 'no',
    '--appendfsync',
    'everysec',
    '--save',
    '',
  ];
  const { pid, reused } = await launch('redis', {
    dataDir,
    port,
    logFile,
    onSpawn,
    label: 'Redis',
    envVar: 'REDIS_URL',
    command: bin,
    args,
    spawnOptions: { cwd: dataDir },
    ready: (p, logOffset) => waitForRedis(host, port, timeoutMs, { pid: p, name: 'Redis', logFile, logOffset }),
  });
  return { pid, url: `redis://${host}:${port}`, port, reused };
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

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
