// A local Janus media server (Debian package `janus`) for the stack launcher and the tests: its
// configuration generated into a data directory, WebSocket and Admin WebSocket on loopback, run as
// an unprivileged user when we are root (see /work/shared/design/media-plane-spike.md, §3).
// Plain Node built-ins only, like servers.mjs.
import fs from 'node:fs';
import path from 'node:path';
import { findBinary, isAlive, LOOPBACK, readLogTail, spawnDetached, StackError, stopPid, waitForTcp } from './servers.mjs';

const DISABLED_PLUGINS = ['echotest', 'duktape', 'lua', 'nosip', 'recordplay', 'sip', 'streaming', 'videocall', 'voicemail'];
const DISABLED_TRANSPORTS = ['http', 'mqtt', 'nanomsg', 'pfunix', 'rabbitmq'];
const DISABLED_EVENT_HANDLERS = ['gelfevh', 'mqttevh', 'nanomsgevh', 'rabbitmqevh', 'sampleevh', 'wsevh'];

/** Absolute path of the janus binary, or null when the package is not installed. */
export function findJanus() {
  return findBinary('janus');
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

/** Writes janus.jcfg, the WebSocket transport and the room plugins' files into `<dataDir>/conf`. */
export function writeJanusConfig({ dataDir, wsPort, adminPort, adminSecret, roomAdminKey, sessionTimeoutSeconds = 60, rtpPortRange = '40000-40999', host = LOOPBACK, serverName = 'switchboard' }) {
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
nat: { nice_debug = false  ignore_mdns = true }
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
export async function startJanus({ dataDir, wsPort, adminPort, adminSecret, roomAdminKey, sessionTimeoutSeconds, rtpPortRange, host = LOOPBACK, timeoutMs = 15000 }) {
  const bin = findJanus();
  if (!bin) throw new StackError('Janus is not installed: `node tools/stack/cli.mjs ensure-servers` (or `apt-get install janus`).');
  dataDir = path.resolve(dataDir);
  const conf = writeJanusConfig({ dataDir, wsPort, adminPort, adminSecret, roomAdminKey, sessionTimeoutSeconds, rtpPortRange, host });
  const user = process.getuid?.() === 0 ? nobody() : undefined;
  if (user) {
    // The configuration (it holds the secrets) is readable by Janus's user alone.
    fs.chmodSync(dataDir, 0o755);
    for (const entry of [conf, ...fs.readdirSync(conf).map((f) => path.join(conf, f))]) fs.chownSync(entry, user.uid, user.gid);
  }
  const logFile = path.join(dataDir, 'janus.log');
  // -o: no colours; the log goes to stdout, which spawnDetached appends to logFile.
  const { pid, logOffset } = await spawnDetached(bin, ['-F', conf, '-o'], { logFile, cwd: dataDir, uid: user?.uid, gid: user?.gid });
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
