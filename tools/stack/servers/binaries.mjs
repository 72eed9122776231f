// Finding the server binaries, and installing missing ones with apt-get when we are root.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { StackError, tailText } from './stack-error.mjs';

const EXTRA_BIN_DIRS = ['/usr/local/sbin', '/usr/sbin', '/sbin'];

export function isExecutableFile(file) {
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

export function isRoot() {
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

/** The browser tests' system Chromium (Debian `chromium`): installed with apt-get when missing and we are root. */
export function ensureChromium({ install = false, log = console.log } = {}) {
  const find = () => findBinary('chromium') ?? findBinary('chromium-browser');
  if (find() || !install || !isRoot()) return find();
  aptInstall(['chromium'], log);
  return find();
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
