// The foreground process of `npm start`: starts servers and services in order, watches them, and
// stops them in reverse order on a signal.
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { assertBuilt, camelCase, runMigrations, runNodeScript, serviceNode } from './apps.mjs';
import { janusLabel, janusNumber, mediaAgentEnv } from './media-servers.mjs';
import { describeExit, formatError, indent, lastJsonLine, rel } from './report.mjs';
import {
  describePortOwners,
  isAlive,
  isPortInUse,
  processMatches,
  readLogTail,
  spawnDetached,
  StackError,
  stopPid,
  stopServer,
} from './servers.mjs';
import { startServers } from './stack-servers.mjs';
import {
  CONSOLE,
  DEMO_ROOM,
  READY_TIMEOUT_MS,
  readStackFile,
  SERVER_LABELS,
  SERVICE_STOP_TIMEOUT_MS,
  writeStackFile,
  localSecrets,
} from './stack-state.mjs';
import { httpStatus } from './summary.mjs';

/** "PostgreSQL", "Janus", "Janus 2", ...: a server of stack.json by the name people know it by. */
const serverLabel = (name) => SERVER_LABELS[name] ?? janusLabel(janusNumber(name) ?? 1);

export class Launcher {
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
    this.mediaEnvs = new Map(); // media-agent service -> the settings of its Janus
    this.mediaPairCount = 0;
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
      ...(app.mediaPair ? mediaAgentEnv(this.mediaEnvs.get(app.service), this.mediaPairCount) : process.env),
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(app.port),
      NATS_URL: serverUrls.nats,
      REDIS_URL: serverUrls.redis,
      DATABASE_URL: serverUrls.database,
      ...(app.service === CONSOLE ? this.consoleEnv() : {}),
      ...(app.service === DEMO_ROOM ? this.demoRoomEnv() : {}),
    };
  }

  /** The demo room gets tokens from interface B with the admin API key; its page reaches this gateway. */
  demoRoomEnv() {
    const env = { DEMO_API_KEY: this.state.adminApiKey ?? '' };
    if (this.urls.managementApi) env.DEMO_MANAGEMENT_URL = this.urls.managementApi;
    if (this.urls.adminGateway) env.DEMO_SYNC_URL = `${this.urls.adminGateway.replace(/^http/, 'ws')}/sync`;
    return env;
  }

  /** The console forwards to this stack's interface A and B (started before it). */
  consoleEnv() {
    const env = {};
    if (this.urls.adminGateway) env.CONSOLE_GATEWAY_URL = this.urls.adminGateway;
    if (this.urls.managementApi) env.CONSOLE_MANAGEMENT_URL = this.urls.managementApi;
    if (this.urls.recordingService) env.CONSOLE_RECORDINGS_URL = this.urls.recordingService;
    return env;
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

  /** Starts the services, the console last: once interface A and B are ready. */
  async startServices(apps, serverUrls) {
    for (const app of apps) assertBuilt(this.paths.root, app.main, `entry point of ${app.service}`);
    for (const app of apps) await this.freeServicePort(app);
    await this.startWave(
      apps.filter((a) => a.service !== CONSOLE && a.service !== DEMO_ROOM),
      serverUrls,
    );
    await this.startWave(
      apps.filter((a) => a.service === CONSOLE),
      serverUrls,
    );
  }

  async startWave(apps, serverUrls) {
    if (apps.length === 0) return;
    for (const app of apps) {
      await this.startService(app, serverUrls);
      this.urls[camelCase(app.service)] = `http://127.0.0.1:${app.port}`;
    }
    this.save();
    this.log(`Waiting for ${apps.map((a) => a.service).join(', ')} to be ready…`);
    const entries = apps.map((app) => this.services.get(app.service));
    await Promise.all(entries.map((entry) => this.waitReady(entry)));
    for (const entry of entries)
      this.log(`  ${entry.app.service} ready (pid ${entry.pid}) on http://127.0.0.1:${entry.app.port}`);
  }

  /** The demo room, once the bootstrap gave the admin API key (without it, it cannot get tokens). */
  async startDemoRoom(apps, serverUrls) {
    const demoRoom = apps.find((a) => a.service === DEMO_ROOM);
    if (!demoRoom) return;
    if (!this.state.adminApiKey) {
      this.log('warning: the demo room is not started: no admin API key (see above).');
      return;
    }
    await this.startWave([demoRoom], serverUrls);
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
          `\n✖ ${serverLabel(name)} (pid ${pid}) has stopped; services that need it will fail. Last lines of ${rel(this.paths, logFile)}:\n` +
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
      const janusNames = [...this.servers.keys()].filter((name) => janusNumber(name) !== null);
      for (const name of [...janusNames, 'postgres', 'redis', 'nats']) {
        const pid = this.servers.get(name);
        if (pid === undefined) continue;
        try {
          if (await stopServer(name, pid, { dataDir: this.paths.dataDirs[name] }))
            this.log(`  stopped ${serverLabel(name)}`);
        } catch (error) {
          failures.push(`${serverLabel(name)}: ${error.message}`);
        }
      }
      this.forgetPids();
      if (failures.length) throw new StackError(`Some processes did not stop:\n${indent(failures.join('\n'))}`);
      this.log('Switchboard stopped.');
    })();
    return this.stopping;
  }
}
