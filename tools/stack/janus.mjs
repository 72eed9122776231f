// A local Janus media server (Debian package `janus`) for the stack launcher and the tests: its
// configuration generated into a data directory, WebSocket and Admin WebSocket on loopback, run as
// an unprivileged user when we are root (see /work/shared/design/media-plane-spike.md, §3).
// Plain Node built-ins only, like servers.mjs.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  aptInstall,
  describePortOwners,
  findBinary,
  isAlive,
  isPortInUse,
  LOOPBACK,
  processMatches,
  readLogTail,
  spawnDetached,
  StackError,
  stopPid,
  waitForTcp,
} from './servers.mjs';

const DISABLED_PLUGINS = [
  'echotest',
  'duktape',
  'lua',
  'nosip',
  'recordplay',
  'sip',
  'streaming',
  'videocall',
  'voicemail',
];
const DISABLED_TRANSPORTS = ['http', 'mqtt', 'nanomsg', 'pfunix', 'rabbitmq'];
const DISABLED_EVENT_HANDLERS = ['gelfevh', 'mqttevh', 'nanomsgevh', 'rabbitmqevh', 'sampleevh', 'wsevh'];

/** Absolute path of the janus binary, or null when the package is not installed. */
export function findJanus() {
  return findBinary('janus');
}

/**
 * The janus binary, installed with apt-get when missing and `install` is set (as root). Never
 * throws: resolves to { bin } or { bin: null, reason } so the rest of the stack runs without it.
 */
export function ensureJanus({ install = false, log = console.log } = {}) {
  let bin = findJanus();
  // janus-pp-rec (janus-tools) converts the recordings; Janus runs without it.
  const canInstall = install && process.getuid?.() === 0;
  if (bin && (findBinary('janus-pp-rec') || !canInstall)) return { bin };
  if (!canInstall) return { bin: null, reason: 'Janus is not installed (as root: apt-get install janus janus-tools)' };
  try {
    aptInstall(['janus', 'janus-tools'], log);
  } catch (error) {
    return { bin: null, reason: `apt-get install janus failed: ${error.message.split('\n')[0]}` };
  }
  bin = findJanus();
  return bin ? { bin } : { bin: null, reason: 'apt-get install janus finished but janus cannot be found' };
}

/** uid/gid of `nobody` (Janus needs no root: every port is above 1024). */
function nobody() {
  try {
    for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [user, , uid, gid] = line.split(':');
      if (user === 'nobody') return { uid: Number(uid), gid: Number(gid) };
    }
  } catch {
    // fall through
  }
  return { uid: 65534, gid: 65534 };
}

const quote = (value) => JSON.stringify(String(value));
const soList = (prefix, names) => quote(names.map((n) => `libjanus_${prefix}${n}.so`).join(','));

/**
 * Writes janus.jcfg, the WebSocket transport and the room plugins' files into `<dataDir>/conf`.
 * `natMapping`: the public IP Janus puts in its ICE candidates (a host behind 1:1 NAT, a cloud node).
 */
export function writeJanusConfig({
  dataDir,
  wsPort,
  adminPort,
  adminSecret,
  roomAdminKey,
  sessionTimeoutSeconds = 60,
  rtpPortRange = '40000-40999',
  host = LOOPBACK,
  serverName = 'switchboard',
  natMapping,
}) {
  const conf = path.join(dataDir, 'conf');
  fs.mkdirSync(conf, { recursive: true });
  const files = {
    'janus.jcfg': `general: {
  debug_level = 4
  debug_timestamps = true
  server_name = ${quote(serverName)}
  session_timeout = ${sessionTimeoutSeconds}
  admin_secret = ${quote(adminSecret)}
  protected_folders = [ "/bin", "/boot", "/dev", "/etc", "/lib", "/lib64", "/proc", "/sbin", "/sys", "/usr", "/var" ]
}
media: { rtp_port_range = ${quote(rtpPortRange)} }
nat: { nice_debug = false  ignore_mdns = true${natMapping ? `  nat_1_1_mapping = ${quote(natMapping)}  keep_private_host = false` : ''} }
plugins: { disable = ${soList('', DISABLED_PLUGINS)} }
transports: { disable = ${soList('', DISABLED_TRANSPORTS)} }
loggers: { disable = "libjanus_jsonlog.so" }
events: { broadcast = false  disable = ${soList('', DISABLED_EVENT_HANDLERS)} }
`,
    'janus.transport.websockets.jcfg': `general: { json = "plain"  ws = true  ws_port = ${wsPort}  ws_ip = ${quote(host)}  wss = false }
admin: { admin_ws = true  admin_ws_port = ${adminPort}  admin_ws_ip = ${quote(host)}  admin_wss = false }
`,
    'janus.plugin.videoroom.jcfg': `general: { admin_key = ${quote(roomAdminKey)}  events = false }\n`,
    'janus.plugin.audiobridge.jcfg': `general: { admin_key = ${quote(roomAdminKey)}  events = false }\n`,
    'janus.plugin.textroom.jcfg': `general: { admin_key = ${quote(roomAdminKey)}  events = false  json = "plain" }\n`,
  };
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(conf, name), text, { mode: 0o640 });
  return conf;
}

/**
 * Starts Janus with a configuration written into `<dataDir>/conf` (log in `<dataDir>/janus.log`).
 * As root it runs as `nobody` (Node switches uid right before exec, so the pid is Janus's own).
 * Resolves to { pid, wsUrl, adminUrl, logFile } once both WebSocket ports accept connections.
 */
export async function startJanus({
  dataDir,
  wsPort,
  adminPort,
  adminSecret,
  roomAdminKey,
  sessionTimeoutSeconds,
  rtpPortRange,
  host = LOOPBACK,
  timeoutMs = 15000,
  logFile,
}) {
  const bin = findJanus();
  if (!bin)
    throw new StackError(
      'Janus is not installed: `node tools/stack/cli.mjs ensure-servers` (or `apt-get install janus`).',
    );
  dataDir = path.resolve(dataDir);
  const conf = writeJanusConfig({
    dataDir,
    wsPort,
    adminPort,
    adminSecret,
    roomAdminKey,
    sessionTimeoutSeconds,
    rtpPortRange,
    host,
  });
  const user = process.getuid?.() === 0 ? nobody() : undefined;
  if (user) {
    // The configuration (it holds the secrets) is readable by Janus's user alone.
    fs.chmodSync(dataDir, 0o755);
    for (const entry of [conf, ...fs.readdirSync(conf).map((f) => path.join(conf, f))])
      fs.chownSync(entry, user.uid, user.gid);
  }
  logFile ??= path.join(dataDir, 'janus.log');
  // -o: no colours; the log goes to stdout, which spawnDetached appends to logFile.
  const { pid, logOffset } = await spawnDetached(bin, ['-F', conf, '-o'], {
    logFile,
    cwd: dataDir,
    uid: user?.uid,
    gid: user?.gid,
  });
  try {
    await waitForTcp(host, wsPort, timeoutMs, { pid, name: 'Janus', logFile, logOffset });
    await waitForTcp(host, adminPort, timeoutMs, { pid, name: 'Janus (admin)', logFile, logOffset });
  } catch (error) {
    await stopPid(pid, { timeoutMs: 3000 }).catch(() => {});
    throw error;
  }
  return { pid, wsUrl: `ws://${host}:${wsPort}/`, adminUrl: `ws://${host}:${adminPort}/`, logFile };
}

/** Stops a Janus started by startJanus (SIGTERM, SIGKILL after `timeoutMs`). */
export async function stopJanus(pid, { timeoutMs = 5000 } = {}) {
  return stopPid(pid, { timeoutMs });
}

export { isAlive as janusAlive, readLogTail as janusLogTail };

export const STACK_JANUS_PORTS = Object.freeze({ ws: 18188, admin: 17188 });
/** The UDP range Janus allocates media ports from, and what the stack's media-agent announces. */
export const STACK_RTP_PORT_RANGE = '40000-40999';

/** Whether `pid` is the stack's Janus (its configuration directory is on its command line). */
export function isStackJanus(pid, dataDir) {
  return processMatches(pid, 'janus', path.join(path.resolve(dataDir), 'conf'));
}

/**
 * `npm start`: one of the stack's Janus servers on its loopback ports (pair 1: STACK_JANUS_PORTS and
 * STACK_RTP_PORT_RANGE) with data in `dataDir` (a Janus left running there by an earlier run is
 * stopped first). Resolves to { pid, wsUrl, env } where env holds the JANUS_* and MEDIA_* settings of
 * its media-agent, whose own files (its media server id) go to `agentDataDir`.
 */
export async function startStackJanus({
  dataDir,
  secrets,
  previousPid,
  logFile,
  wsPort = STACK_JANUS_PORTS.ws,
  adminPort = STACK_JANUS_PORTS.admin,
  rtpPortRange = STACK_RTP_PORT_RANGE,
  agentDataDir = path.join(path.dirname(path.resolve(dataDir)), 'media-agent'),
  label = 'Janus',
}) {
  if (previousPid && isStackJanus(previousPid, dataDir)) await stopPid(previousPid, { timeoutMs: 5000 });
  for (const port of [wsPort, adminPort]) {
    if (await isPortInUse(port))
      throw new StackError(`Port ${port}, needed by ${label}, is already in use by ${describePortOwners(port)}.`);
  }
  const janus = await startJanus({
    dataDir,
    wsPort,
    adminPort,
    adminSecret: secrets.JANUS_ADMIN_SECRET,
    roomAdminKey: secrets.JANUS_ROOM_ADMIN_KEY,
    rtpPortRange,
    logFile,
  });
  return {
    pid: janus.pid,
    wsUrl: janus.wsUrl,
    env: {
      JANUS_URL: janus.wsUrl,
      JANUS_ADMIN_URL: janus.adminUrl,
      JANUS_ADMIN_SECRET: secrets.JANUS_ADMIN_SECRET,
      JANUS_ROOM_ADMIN_KEY: secrets.JANUS_ROOM_ADMIN_KEY,
      MEDIA_SERVER_ADDRESSES: `udp://${LOOPBACK}:${rtpPortRange}`,
      MEDIA_AGENT_DATA_DIR: agentDataDir,
    },
  };
}

/** Secrets of the stack's Janus, generated once (kept with the stack's other local secrets). */
export function newJanusSecrets() {
  return {
    JANUS_ADMIN_SECRET: randomBytes(24).toString('base64url'),
    JANUS_ROOM_ADMIN_KEY: randomBytes(24).toString('base64url'),
  };
}
