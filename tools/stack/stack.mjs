// The local stack: NATS, Redis and PostgreSQL under .data/stack plus every service in apps/, run in the
// foreground by `npm start` and stopped in order on Ctrl-C or `npm stop`. Plain Node built-ins only.
import fs from 'node:fs';
import path from 'node:path';
import { camelCase, discoverApps, REPO_ROOT } from './apps.mjs';
import { ensureJanus, isStackJanus } from './janus.mjs';
import { Launcher } from './launcher.mjs';
import { startMediaServers } from './media-launch.mjs';
import { appServiceOf, janusDataDir, janusLabel, janusNumber, mediaServerPairs } from './media-servers.mjs';
import { formatError, rel } from './report.mjs';
import {
  describePortOwners,
  ensureBinaries,
  isAlive,
  isPortInUse,
  isServerOf,
  pidFilePath,
  processMatches,
  readPidFile,
  StackError,
  stopPid,
  stopServer,
} from './servers.mjs';
import { externalServers } from './stack-servers.mjs';
import {
  LAUNCHER_MARK,
  MEDIA_AGENT,
  readStackFile,
  SERVER_LABELS,
  SERVER_NAMES,
  SERVICE_STOP_TIMEOUT_MS,
  STACK_PORTS,
  stackPaths,
  writeStackFile,
} from './stack-state.mjs';
import { httpStatus, printSummary } from './summary.mjs';
import { prepareWorkspace } from './workspace.mjs';

/**
 * `npm start`: installs dependencies when needed, makes sure the servers exist, builds, starts the
 * servers and services, bootstraps the admin key, writes stack.json and stays in the foreground until
 * SIGINT/SIGTERM. `serversOnly` starts just NATS, Redis and PostgreSQL (no install, build or services);
 * `mediaServers` is how many Janus + media-agent pairs run. Resolves once the stack runs; the process
 * then lives on until a signal stops it.
 */
export async function startStack({ root = REPO_ROOT, serversOnly = false, mediaServers = 1, log = console.log } = {}) {
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
    let pairs = [];
    if (!serversOnly) {
      apps = discoverApps(root);
      const agent = apps.find((a) => a.service === MEDIA_AGENT);
      if (agent) {
        const servicePorts = apps.map((a) => a.port);
        pairs = mediaServerPairs(mediaServers, {
          stackDir: paths.dir,
          logsDir: paths.logs,
          agentPort: agent.port,
          servicePorts,
        });
      }
      const janus = ensureJanus({ install: true, log });
      if (!janus.bin) launcher.mediaNote = janus.reason;
      if (apps.length === 0)
        log('warning: no service declares a "switchboard" key in apps/*/package.json; starting the servers only.');
    }
    fs.mkdirSync(paths.logs, { recursive: true });
    const serverUrls = await launcher.startServers(external);
    launcher.checkInterrupted();
    await launcher.migrate(apps, serverUrls);
    apps = await startMediaServers(launcher, apps, pairs);
    if (apps.length) await launcher.startServices(apps, serverUrls);
    await launcher.bootstrap(apps, serverUrls);
    await launcher.startDemoRoom(apps, serverUrls);
    launcher.checkInterrupted();
    launcher.save();
    await printSummary(launcher, apps);
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
    const app = discoverApps(root).find((a) => a.service === appServiceOf(name));
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
  const pids = { ...state?.pids, ...current?.pids };
  delete pids.launcher;
  for (const [name, pid] of Object.entries(pids)) {
    if (SERVER_NAMES.includes(name)) continue;
    checked.push({ what: name, pid });
    if (janusNumber(name) !== null) {
      if (!isStackJanus(pid, janusDataDir(paths.dir, janusNumber(name)))) continue;
      log(`Stopping ${janusLabel(janusNumber(name))} (pid ${pid})…`);
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
      : janusNumber(what) !== null
        ? isStackJanus(pid, janusDataDir(paths.dir, janusNumber(what)))
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
    else if (janusNumber(name) !== null) {
      alive = isStackJanus(pid, janusDataDir(paths.dir, janusNumber(name)));
      url = state.urls?.[camelCase(name)] ?? '';
    } else if (SERVER_NAMES.includes(name)) {
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
