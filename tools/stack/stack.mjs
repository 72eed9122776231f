// The local stack: NATS, Redis and PostgreSQL under .data/stack plus every service in apps/, run in the
// foreground by `npm start` and stopped in order on Ctrl-C or `npm stop`. Plain Node built-ins only.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { assertBuilt, camelCase, discoverApps, REPO_ROOT, runMigrations, runNodeScript, serviceNode } from './apps.mjs';
import { ensureJanus, isStackJanus, newJanusSecrets, startStackJanus } from './janus.mjs';
import {
  ensureBinaries,
  ensureDatabase,
  isAlive,
  isPortInUse,
  describePortOwners,
  isServerOf,
  pidFilePath,
  processMatches,
  readLogTail,
  readPidFile,
  spawnDetached,
  StackError,
  startNats,
  startPostgres,
  startRedis,
  stopPid,
  stopServer,
  withDatabase,
} from './servers.mjs';

export const STACK_PORTS = Object.freeze({ nats: 14222, redis: 16379, postgres: 15432 });
export const STACK_DATABASE = 'switchboard';
const SERVER_NAMES = ['nats', 'redis', 'postgres'];
const SERVER_LABELS = { nats: 'NATS', redis: 'Redis', postgres: 'PostgreSQL', janus: 'Janus' };
/** The service that runs beside Janus: started only when Janus is. */
const MEDIA_AGENT = 'media-agent';
const EXTERNAL_ENV = { nats: 'NATS_URL', redis: 'REDIS_URL', postgres: 'DATABASE_URL' };
const READY_TIMEOUT_MS = 60000;
const SERVICE_STOP_TIMEOUT_MS = 15000;
const LAUNCHER_MARK = path.join('tools', 'stack', 'cli.mjs');

export function stackPaths(root = REPO_ROOT) {
  const dir = path.join(root, '.data', 'stack');
  return {
    root,
    dir,
    stackFile: path.join(dir, 'stack.json'),
    secretsFile: path.join(dir, 'secrets.json'),
    recordings: path.join(dir, 'recordings'),
    janus: path.join(dir, 'janus'),
    logs: path.join(dir, 'logs'),
    dataDirs: { nats: path.join(dir, 'nats'), redis: path.join(dir, 'redis'), postgres: path.join(dir, 'pg') },
  };
}

/**
 * Secrets the local stack generates once and keeps (mode 0600), so that a second `npm start`
 * reuses them: signed recording URLs stay valid across restarts.
 */
export function localSecrets(paths) {
  let kept = null;
  try {
    kept = JSON.parse(fs.readFileSync(paths.secretsFile, 'utf8'));
  } catch (error) {
    if (error.code !== 'ENOENT')
      throw new StackError(`${paths.secretsFile} is unreadable (${error.message}); \`npm run reset\` starts over.`);
  }
  // A secrets file from before Janus was part of the stack gets the Janus secrets added.
  if (kept && kept.JANUS_ADMIN_SECRET) return kept;
  const secrets = { RECORDINGS_URL_SECRET: randomBytes(48).toString('base64url'), ...newJanusSecrets(), ...kept };
  fs.mkdirSync(path.dirname(paths.secretsFile), { recursive: true });
  fs.writeFileSync(paths.secretsFile, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  return secrets;
}

export function readStackFile(paths) {
  try {
    return JSON.parse(fs.readFileSync(paths.stackFile, 'utf8'));
  } catch (error) {
    if (error.code === 'ENOENT') return null;
    throw new StackError(`${paths.stackFile} is unreadable (${error.message}); \`npm run reset\` starts over.`);
  }
}

/** Writes stack.json atomically, readable by the owner only (it holds the admin API key). */
export function writeStackFile(paths, state) {
  fs.mkdirSync(paths.dir, { recursive: true });
  const tmp = `${paths.stackFile}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, paths.stackFile);
}

function rel(paths, file) {
  return path.relative(paths.root, file) || '.';
}

function indent(text, prefix = '    ') {
  return text
    .split('\n')
    .map((line) => prefix + line)
    .join('\n');
}

function formatError(error) {
  let text = error.message;
  if (error.logTail) text += `\n${indent(error.logTail, '  │ ')}`;
  return text;
}

/**
 * Runs a command with the terminal attached; resolves to its exit code. `stdoutToStderr` sends its
 * output to this process's stderr, for callers whose stdout is data (a benchmark's `--json`).
 */
function runInherited(command, args, cwd, { stdoutToStderr = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      stdio: stdoutToStderr ? ['inherit', process.stderr, 'inherit'] : 'inherit',
    });
    child.once('error', (error) => reject(new StackError(`Could not run ${command}: ${error.message}`)));
    child.once('close', (code, signal) => resolve(signal ? 128 : code));
  });
}

/** Why `npm install` must run first, or null when node_modules is current. */
export function installReason(root) {
  const modules = path.join(root, 'node_modules');
  const hidden = path.join(modules, '.package-lock.json');
  const lock = path.join(root, 'package-lock.json');
  if (!fs.existsSync(modules)) return 'node_modules is missing';
  if (!fs.existsSync(hidden)) return 'node_modules was not installed by npm';
  if (fs.existsSync(lock) && fs.statSync(lock).mtimeMs > fs.statSync(hidden).mtimeMs)
    return 'package-lock.json changed since the last install';
  return null;
}

/**
 * What `npm start` and the benchmarks do before they run anything: `npm install` when node_modules
 * is not current (installReason), then `npm run build` (Nx: a cache hit, about 2 s, when nothing
 * changed). Throws a StackError when either fails.
 */
export async function prepareWorkspace({ root = REPO_ROOT, log = console.log, stdoutToStderr = false } = {}) {
  const reason = installReason(root);
  if (reason) {
    log(`Running npm install (${reason})…`);
    if ((await runInherited('npm', ['install'], root, { stdoutToStderr })) !== 0)
      throw new StackError('npm install failed (see above).');
  }
  log('Building (npm run build)…');
  if ((await runInherited('npm', ['run', 'build'], root, { stdoutToStderr })) !== 0)
    throw new StackError('npm run build failed (see above).');
}

/** External servers named by NATS_URL / REDIS_URL / DATABASE_URL. */
function externalServers(env = process.env) {
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

function apiUrl(app) {
  const base = `http://127.0.0.1:${app.port}`;
  return app.service === 'admin-gateway' ? `${base}/admin/api/v1.0` : base;
}

async function httpStatus(url, timeoutMs = 2000) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel().catch(() => {});
    return { status: res.status };
  } catch (error) {
    return { error: error.cause?.code ?? error.name ?? error.message };
  }
}

class Launcher {
  constructor({ paths, previous, log }) {
    this.paths = paths;
    this.log = log;
    this.servers = new Map(); // name -> pid
    this.services = new Map(); // service -> { app, pid, child, logFile, logOffset, exit }
    this.urls = {};
    this.state = {
      adminApiKey: previous?.adminApiKey ?? null,
      organizationId: previous?.organizationId ?? null,
    };
    this.previous = previous;
    this.startedAt = new Date().toISOString();
    this.stopping = null;
    this.firstSignalAt = 0;
    this.reported = new Set();
  }

  installSignalHandlers() {
    const onSignal = (sig) => {
      const now = Date.now();
      if (!this.stopping) {
        this.firstSignalAt = now;
        this.log(`\nReceived ${sig}: stopping Switchboard…`);
        this.shutdown().then(
          () => process.exit(0),
          (error) => {
            this.log(`✖ ${formatError(error)}`);
            process.exit(1);
          },
        );
        return;
      }
      // A terminal Ctrl-C reaches us both directly and forwarded by npm: ignore the echo.
      if (now - this.firstSignalAt < 1500) return;
      this.log('Second signal: killing everything now.');
      for (const pid of this.allPids()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      this.forgetPids();
      process.exit(1);
    };
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, onSignal);
  }

  allPids() {
    return [...[...this.services.values()].map((s) => s.pid), ...this.servers.values()];
  }

  /** Records a spawned server; one that appears while we are stopping is stopped right away. */
  trackServer(name, pid) {
    this.servers.set(name, pid);
    if (this.stopping) stopServer(name, pid, { dataDir: this.paths.dataDirs[name] }).catch(() => {});
  }

  snapshot() {
    const pids = { launcher: process.pid };
    for (const [name, pid] of this.servers) pids[name] = pid;
    for (const [service, s] of this.services) if (!s.exit) pids[service] = s.pid;
    return {
      urls: this.urls,
      adminApiKey: this.state.adminApiKey,
      organizationId: this.state.organizationId,
      pids,
      logs: this.paths.logs,
      startedAt: this.startedAt,
    };
  }

  save() {
    writeStackFile(this.paths, this.snapshot());
  }

  forgetPids() {
    try {
      const current = readStackFile(this.paths) ?? this.snapshot();
      writeStackFile(this.paths, { ...current, pids: {}, stoppedAt: new Date().toISOString() });
    } catch {
      // best effort while going down
    }
  }

  checkInterrupted() {
    if (this.stopping) throw Object.assign(new Error('interrupted'), { interrupted: true });
  }

  async startServers(external) {
    const result = await startServers({
      paths: this.paths,
      external,
      log: this.log,
      onSpawn: (name, pid) => this.trackServer(name, pid),
    });
    for (const [name, pid] of Object.entries(result.pids)) this.servers.set(name, pid);
    this.urls = { ...this.urls, ...result.urls };
    this.save();
    return result.urls;
  }

  serviceEnv(app, serverUrls) {
    return {
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      // A local stack: webhooks may target a receiver on this machine (loopback only; private and
      // metadata addresses stay refused). Production keeps the default, false.
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      RECORDINGS_DIR: path.join(this.paths.recordings, 'work'),
      RECORDINGS_STORAGE_DIR: path.join(this.paths.recordings, 'storage'),
      ...localSecrets(this.paths),
      ...(app.service === MEDIA_AGENT ? this.janusEnv : {}),
      ...process.env,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(app.port),
      NATS_URL: serverUrls.nats,
      REDIS_URL: serverUrls.redis,
      DATABASE_URL: serverUrls.database,
    };
  }

  /**
   * Starts the stack's Janus for media-agent. Resolves to false (with the reason kept for the
   * banner) when it cannot start: the rest of the stack runs without a media server.
   */
  async startJanus() {
    try {
      const janus = await startStackJanus({
        dataDir: this.paths.janus,
        secrets: localSecrets(this.paths),
        previousPid: this.previous?.pids?.janus,
        logFile: path.join(this.paths.logs, 'janus.log'),
      });
      this.servers.set('janus', janus.pid);
      this.janusEnv = janus.env;
      this.urls.janus = janus.wsUrl;
      this.log(`${'Janus'.padEnd(10)} started (pid ${janus.pid}) on ${janus.wsUrl}`);
      this.save();
      return true;
    } catch (error) {
      this.mediaNote = `Janus did not start (${formatError(error).split('\n')[0]})`;
      this.log(`warning: ${this.mediaNote}; starting without a media server.`);
      return false;
    }
  }

  async migrate(apps, serverUrls) {
    const withMigrate = apps.filter((a) => a.migrate);
    if (withMigrate.length === 0) return;
    this.log(`Migrating ${withMigrate.map((a) => a.service).join(', ')}…`);
    // Migrations of different services may touch shared catalog objects: run them one at a time.
    for (const app of withMigrate) {
      this.checkInterrupted();
      await runMigrations([app], {
        root: this.paths.root,
        env: this.serviceEnv(app, serverUrls),
        logDir: this.paths.logs,
        parallel: false,
        onResult: (a, r) => this.log(`  ${a.service} migrated (${r.ms} ms)`),
      });
    }
  }

  async freeServicePort(app) {
    if (!(await isPortInUse(app.port))) return;
    const leftover = this.previous?.pids?.[app.service];
    if (leftover && processMatches(leftover, app.main)) {
      this.log(`Stopping ${app.service} left over from an earlier run (pid ${leftover})…`);
      await stopPid(leftover, { timeoutMs: SERVICE_STOP_TIMEOUT_MS });
      if (!(await isPortInUse(app.port))) return;
    }
    throw new StackError(
      `Port ${app.port}, needed by ${app.service}, is already in use by ${describePortOwners(app.port)}. Stop that process first.`,
    );
  }

  async startService(app, serverUrls) {
    this.checkInterrupted();
    const logFile = path.join(this.paths.logs, `${app.service}.log`);
    fs.mkdirSync(this.paths.logs, { recursive: true });
    fs.appendFileSync(logFile, `\n----- ${new Date().toISOString()} starting ${app.service} -----\n`);
    const { pid, child, logOffset } = await spawnDetached(serviceNode(this.paths.root), [app.main], {
      logFile,
      cwd: this.paths.root,
      env: this.serviceEnv(app, serverUrls),
    });
    const entry = { app, pid, child, logFile, logOffset, exit: null };
    this.services.set(app.service, entry);
    child.once('exit', (code, signal) => {
      entry.exit = { code, signal };
      this.onServiceExit(entry);
    });
    if (this.stopping) stopPid(pid).catch(() => {});
  }

  async waitReady(entry) {
    const { app } = entry;
    const url = `http://127.0.0.1:${app.port}/readyz`;
    const deadline = Date.now() + READY_TIMEOUT_MS;
    let last = 'no answer';
    for (;;) {
      this.checkInterrupted();
      if (entry.exit) {
        throw new StackError(
          `${app.service} ${describeExit(entry.exit)} before it was ready. Last lines of ${rel(this.paths, entry.logFile)}:`,
          {
            logTail: readLogTail(entry.logFile, entry.logOffset, 40),
          },
        );
      }
      const answer = await httpStatus(url);
      if (answer.status === 200) return;
      last = answer.status ? `HTTP ${answer.status}` : answer.error;
      if (Date.now() >= deadline) {
        throw new StackError(
          `${app.service} did not become ready within ${READY_TIMEOUT_MS / 1000} s (${url} last answered: ${last}). ` +
            `Last lines of ${rel(this.paths, entry.logFile)}:`,
          { logTail: readLogTail(entry.logFile, entry.logOffset, 40) },
        );
      }
      await sleep(250);
    }
  }

  async startServices(apps, serverUrls) {
    for (const app of apps) assertBuilt(this.paths.root, app.main, `entry point of ${app.service}`);
    for (const app of apps) await this.freeServicePort(app);
    for (const app of apps) {
      await this.startService(app, serverUrls);
      this.urls[camelCase(app.service)] = `http://127.0.0.1:${app.port}`;
    }
    this.save();
    this.log(`Waiting for ${apps.map((a) => a.service).join(', ')} to be ready…`);
    await Promise.all([...this.services.values()].map((entry) => this.waitReady(entry)));
    for (const entry of this.services.values())
      this.log(`  ${entry.app.service} ready (pid ${entry.pid}) on http://127.0.0.1:${entry.app.port}`);
  }

  async bootstrap(apps, serverUrls) {
    if (this.state.adminApiKey) return;
    for (const app of apps.filter((a) => a.bootstrap)) {
      this.checkInterrupted();
      assertBuilt(this.paths.root, app.bootstrap, `bootstrap script of ${app.service}`);
      this.log(`Bootstrapping through ${app.service}…`);
      const result = await runNodeScript(app.bootstrap, {
        env: this.serviceEnv(app, serverUrls),
        cwd: this.paths.root,
        logFile: path.join(this.paths.logs, `${app.service}.bootstrap.log`),
      });
      if (result.code !== 0) {
        throw new StackError(
          `Bootstrap of ${app.service} (${rel(this.paths, app.bootstrap)}) ${describeExit(result)}. Its output:`,
          {
            logTail: result.output.trimEnd().split('\n').slice(-40).join('\n'),
          },
        );
      }
      const answer = lastJsonLine(result.stdout);
      if (!answer || typeof answer.organizationId !== 'string') {
        throw new StackError(
          `Bootstrap of ${app.service} did not print a JSON line with organizationId and apiKey. Its output:`,
          {
            logTail: result.output.trimEnd().split('\n').slice(-40).join('\n'),
          },
        );
      }
      this.state.organizationId = answer.organizationId;
      if (typeof answer.apiKey === 'string' && answer.apiKey) {
        this.state.adminApiKey = answer.apiKey;
        this.log(`  created the admin API key for organization ${answer.organizationId}`);
        return;
      }
      this.log(
        `  warning: an admin API key already exists in the database but ${rel(this.paths, this.paths.stackFile)} does not hold it ` +
          '(keys are shown only once). Run `npm run reset` for a fresh stack with a new key.',
      );
    }
  }

  onServiceExit(entry) {
    if (this.stopping || this.reported.has(entry.app.service)) return;
    // Failures during start-up are reported by waitReady; here we watch a stack that was running.
    if (!this.running) return;
    this.reported.add(entry.app.service);
    this.log(
      `\n✖ ${entry.app.service} (pid ${entry.pid}) ${describeExit(entry.exit)}. It is not restarted. Last lines of ${rel(this.paths, entry.logFile)}:\n` +
        indent(readLogTail(entry.logFile, entry.logOffset, 40), '  │ '),
    );
    this.save();
  }

  watch() {
    this.running = true;
    // Also keeps the event loop (and so the launcher) alive: every child is unref'd.
    this.watcher = setInterval(() => {
      for (const [name, pid] of this.servers) {
        if (this.stopping || this.reported.has(name) || isAlive(pid)) continue;
        this.reported.add(name);
        this.servers.delete(name);
        const logFile = path.join(this.paths.logs, `${name}.log`);
        this.log(
          `\n✖ ${SERVER_LABELS[name]} (pid ${pid}) has stopped; services that need it will fail. Last lines of ${rel(this.paths, logFile)}:\n` +
            indent(readLogTail(logFile, 0, 30), '  │ '),
        );
        this.save();
      }
    }, 1000);
  }

  /** Stops services (SIGTERM, in parallel), then PostgreSQL, Redis and NATS, and clears the pids. */
  shutdown() {
    if (this.stopping) return this.stopping;
    this.stopping = (async () => {
      clearInterval(this.watcher);
      const failures = [];
      await Promise.all(
        [...this.services.values()].map(async (entry) => {
          if (entry.exit || !isAlive(entry.pid)) return;
          try {
            await stopPid(entry.pid, { timeoutMs: SERVICE_STOP_TIMEOUT_MS });
            this.log(`  stopped ${entry.app.service}`);
          } catch (error) {
            failures.push(`${entry.app.service}: ${error.message}`);
          }
        }),
      );
      for (const name of ['janus', 'postgres', 'redis', 'nats']) {
        const pid = this.servers.get(name);
        if (pid === undefined) continue;
        try {
          if (await stopServer(name, pid, { dataDir: this.paths.dataDirs[name] }))
            this.log(`  stopped ${SERVER_LABELS[name]}`);
        } catch (error) {
          failures.push(`${SERVER_LABELS[name]}: ${error.message}`);
        }
      }
      this.forgetPids();
      if (failures.length) throw new StackError(`Some processes did not stop:\n${indent(failures.join('\n'))}`);
      this.log('Switchboard stopped.');
    })();
    return this.stopping;
  }

  async printSummary(apps) {
    const lines = ['', 'Switchboard is running.', ''];
    const row = (label, value) => lines.push(`  ${label.padEnd(18)} ${value}`);
    for (const app of apps) {
      const label =
        app.service === 'admin-gateway'
          ? 'Admin API'
          : app.service === 'management-api'
            ? 'Management API'
            : app.service;
      row(label, apiUrl(app));
      const docs = await this.openApiUrl(app);
      if (docs) row('', `OpenAPI: ${docs}`);
    }
    if (apps.length) lines.push('');
    if (this.urls.janus)
      row('Janus', `${this.urls.janus} (media server of ${MEDIA_AGENT}; logs in ${this.paths.janus})`);
    else if (this.mediaNote)
      row(
        'Media server',
        `none: ${this.mediaNote}. Only the simulator's heartbeat-only media servers (npm run simulate) are available.`,
      );
    row('NATS', this.urls.nats);
    row('Redis', this.urls.redis);
    row('PostgreSQL', this.urls.database);
    lines.push('');
    if (this.state.adminApiKey)
      row('Admin API key', `${this.state.adminApiKey}  (organization ${this.state.organizationId})`);
    else if (apps.some((a) => a.bootstrap)) row('Admin API key', `unknown (see the warning above)`);
    row('Stack file', this.paths.stackFile);
    row('Logs', this.paths.logs);
    lines.push('', 'Stop with Ctrl-C or `npm stop`.', '');
    this.log(lines.join('\n'));
  }

  async openApiUrl(app) {
    const base = `http://127.0.0.1:${app.port}`;
    const candidates = [...new Set([`${apiUrl(app)}/openapi.json`, `${base}/openapi.json`])];
    for (const url of candidates) {
      if ((await httpStatus(url, 1500)).status === 200) return url;
    }
    return ['admin-gateway', 'management-api'].includes(app.service)
      ? `${base}/openapi.json (not answering yet)`
      : null;
  }
}

function describeExit(exit) {
  if (exit.signal) return `was killed by ${exit.signal}`;
  return `exited with code ${exit.code}`;
}

function lastJsonLine(stdout) {
  const lines = stdout.trim().split('\n').reverse();
  for (const line of lines) {
    const text = line.trim();
    if (!text.startsWith('{')) continue;
    try {
      return JSON.parse(text);
    } catch {
      // not the answer line
    }
  }
  return null;
}

/**
 * `npm start`: installs dependencies when needed, makes sure the servers exist, builds, starts the
 * servers and services, bootstraps the admin key, writes stack.json and stays in the foreground until
 * SIGINT/SIGTERM. `serversOnly` starts just NATS, Redis and PostgreSQL (no install, build or services).
 * Resolves once the stack runs; the process then lives on until a signal stops it.
 */
export async function startStack({ root = REPO_ROOT, serversOnly = false, log = console.log } = {}) {
  const paths = stackPaths(root);
  const previous = readStackFile(paths);
  const previousLauncher = previous?.pids?.launcher;
  if (previousLauncher && previousLauncher !== process.pid && processMatches(previousLauncher, LAUNCHER_MARK)) {
    throw new StackError(
      `The stack is already running (launcher pid ${previousLauncher}). Stop it with \`npm stop\`; \`node tools/stack/cli.mjs status\` shows what runs.`,
    );
  }

  const launcher = new Launcher({ paths, previous, log });
  launcher.installSignalHandlers();
  try {
    if (!serversOnly) await prepareWorkspace({ root, log });
    launcher.checkInterrupted();
    const external = externalServers();
    ensureBinaries({ install: true, servers: SERVER_NAMES.filter((s) => !external[s]), ffmpeg: !serversOnly, log });
    let apps = [];
    if (!serversOnly) {
      apps = discoverApps(root);
      const janus = ensureJanus({ install: true, log });
      if (!janus.bin) launcher.mediaNote = janus.reason;
      if (apps.length === 0)
        log('warning: no service declares a "switchboard" key in apps/*/package.json; starting the servers only.');
    }
    fs.mkdirSync(paths.logs, { recursive: true });
    const serverUrls = await launcher.startServers(external);
    launcher.checkInterrupted();
    await launcher.migrate(apps, serverUrls);
    if (apps.some((a) => a.service === MEDIA_AGENT) && (launcher.mediaNote || !(await launcher.startJanus()))) {
      apps = apps.filter((a) => a.service !== MEDIA_AGENT);
    }
    if (apps.length) await launcher.startServices(apps, serverUrls);
    await launcher.bootstrap(apps, serverUrls);
    launcher.checkInterrupted();
    launcher.save();
    await launcher.printSummary(apps);
    launcher.watch();
    return launcher;
  } catch (error) {
    if (launcher.stopping) {
      // A signal arrived during start-up: its handler stops everything and exits.
      await launcher.stopping.catch(() => {});
      return new Promise(() => {});
    }
    log(`\n✖ ${formatError(error)}\n`);
    log('Stopping what was started…');
    await launcher.shutdown().catch((e) => log(`✖ ${formatError(e)}`));
    throw Object.assign(error instanceof StackError ? error : new StackError(error.message), { reported: true });
  }
}

function serviceNeedle(root, name) {
  try {
    const app = discoverApps(root).find((a) => a.service === name);
    if (app) return app.main;
  } catch {
    // apps/ unreadable: fall back to the generic marker
  }
  return path.join(root, 'apps') + path.sep;
}

/** Ports of everything the stack file says we own on loopback (servers and services). */
function ownedPorts(state) {
  const ports = new Set();
  for (const [key, url] of Object.entries(state?.urls ?? {})) {
    if (['nats', 'redis', 'database'].includes(key)) continue;
    try {
      const parsed = new URL(url);
      if (parsed.hostname === '127.0.0.1') ports.add(Number(parsed.port));
    } catch {
      // not a URL
    }
  }
  for (const name of SERVER_NAMES) {
    if (state?.pids?.[name] || !state) ports.add(STACK_PORTS[name]);
  }
  return ports;
}

/**
 * `npm stop`: stops the launcher (which stops everything in order), then whatever it left behind, and
 * checks that no process or port of the stack remains. Works from stack.json and the servers' PID files.
 */
export async function stopStack({ root = REPO_ROOT, log = console.log } = {}) {
  const paths = stackPaths(root);
  const state = readStackFile(paths);
  const checked = [];
  let stoppedSomething = false;

  const launcherPid = state?.pids?.launcher;
  if (launcherPid && launcherPid !== process.pid && processMatches(launcherPid, LAUNCHER_MARK)) {
    log(`Stopping the launcher (pid ${launcherPid}), which stops the services and servers in order…`);
    await stopPid(launcherPid, { timeoutMs: 90000 });
    stoppedSomething = true;
    checked.push({ what: 'launcher', pid: launcherPid });
  }

  // The launcher clears the pids it stopped; check the ones it had too, in case it was killed half-way.
  const current = readStackFile(paths) ?? state;
  const pids = { ...(state?.pids ?? {}), ...(current?.pids ?? {}) };
  delete pids.launcher;
  for (const [name, pid] of Object.entries(pids)) {
    if (SERVER_NAMES.includes(name)) continue;
    checked.push({ what: name, pid });
    if (name === 'janus') {
      if (!isStackJanus(pid, paths.janus)) continue;
      log(`Stopping Janus (pid ${pid})…`);
      await stopPid(pid, { timeoutMs: SERVICE_STOP_TIMEOUT_MS });
      stoppedSomething = true;
      continue;
    }
    if (!processMatches(pid, serviceNeedle(root, name))) continue;
    log(`Stopping ${name} (pid ${pid})…`);
    await stopPid(pid, { timeoutMs: SERVICE_STOP_TIMEOUT_MS });
    stoppedSomething = true;
  }
  for (const name of ['postgres', 'redis', 'nats']) {
    const candidates = new Set([pids[name], readPidFile(pidFilePath(name, paths.dataDirs[name]))].filter(Boolean));
    for (const pid of candidates) {
      checked.push({ what: name, pid });
      if (!isServerOf(name, pid, paths.dataDirs[name])) continue;
      log(`Stopping ${SERVER_LABELS[name]} (pid ${pid})…`);
      await stopServer(name, pid, { dataDir: paths.dataDirs[name] });
      stoppedSomething = true;
    }
  }
  if (current)
    writeStackFile(paths, { ...current, pids: {}, stoppedAt: current.stoppedAt ?? new Date().toISOString() });

  const survivors = checked.filter(({ pid }) => isAlive(pid) && pid !== process.pid);
  const busy = [];
  for (const port of ownedPorts(state ?? current)) {
    if (await isPortInUse(port)) busy.push(`port ${port} is still in use by ${describePortOwners(port)}`);
  }
  const ours = survivors.filter(({ what, pid }) =>
    what === 'launcher'
      ? processMatches(pid, LAUNCHER_MARK)
      : what === 'janus'
        ? isStackJanus(pid, paths.janus)
        : SERVER_NAMES.includes(what)
          ? isServerOf(what, pid, paths.dataDirs[what])
          : processMatches(pid, serviceNeedle(root, what)),
  );
  if (ours.length) {
    throw new StackError(
      `These processes are still running: ${ours.map((s) => `${s.what} (pid ${s.pid})`).join(', ')}.`,
    );
  }
  for (const line of busy) log(`warning: ${line}`);
  log(stoppedSomething ? 'Stopped; no stack process is left.' : 'Nothing was running.');
}

/** `npm run reset`: stops the stack, then deletes .data/stack (databases, streams, Redis data, logs, admin key). */
export async function resetStack({ root = REPO_ROOT, log = console.log } = {}) {
  await stopStack({ root, log });
  const { dir } = stackPaths(root);
  if (fs.existsSync(dir)) {
    fs.rmSync(dir, { recursive: true, force: true });
    log(`Removed ${path.relative(root, dir)} (databases, NATS streams, Redis data, logs and the admin key).`);
  }
}

/** `status`: what stack.json says runs, checked against the live processes. */
export async function stackStatus({ root = REPO_ROOT, log = console.log } = {}) {
  const paths = stackPaths(root);
  const state = readStackFile(paths);
  if (!state) {
    log('The stack has not been started here (no .data/stack/stack.json).');
    return false;
  }
  const entries = Object.entries(state.pids ?? {});
  if (entries.length === 0) {
    log(
      `The stack is not running (last started ${state.startedAt ?? 'at an unknown time'}${state.stoppedAt ? `, stopped ${state.stoppedAt}` : ''}).`,
    );
    return false;
  }
  log(`Switchboard stack, started ${state.startedAt} (${rel(paths, paths.stackFile)}):`);
  let allUp = true;
  for (const [name, pid] of entries) {
    let alive;
    let url = '';
    if (name === 'launcher') alive = processMatches(pid, LAUNCHER_MARK);
    else if (SERVER_NAMES.includes(name)) {
      alive = isServerOf(name, pid, paths.dataDirs[name]);
      url = state.urls?.[name === 'postgres' ? 'database' : name] ?? '';
    } else {
      alive = processMatches(pid, serviceNeedle(root, name));
      url = state.urls?.[camelCase(name)] ?? '';
      if (alive && url) {
        const ready = await httpStatus(`${url}/readyz`, 1500);
        url +=
          ready.status === 200 ? '  ready' : `  not ready (${ready.status ? `HTTP ${ready.status}` : ready.error})`;
      }
    }
    allUp &&= alive;
    log(`  ${name.padEnd(18)} pid ${String(pid).padEnd(8)} ${alive ? 'running' : 'NOT RUNNING'}  ${url}`.trimEnd());
  }
  if (state.adminApiKey) log(`  admin API key      ${state.adminApiKey}`);
  return allUp;
}
