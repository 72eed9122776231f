// Entry point of the switchboard/janus image (the Janus beside each media-agent): writes the
// configuration from the environment with tools/stack/janus.mjs, then runs Janus in the foreground
// and passes SIGTERM/SIGINT on to it.
import { spawn } from 'node:child_process';
import { writeJanusConfig } from './janus.mjs';

const env = process.env;
for (const name of ['JANUS_ADMIN_SECRET', 'JANUS_ROOM_ADMIN_KEY']) {
  if (!env[name]) {
    console.error(`${name} must be set (the same value as media-agent's)`);
    process.exit(78);
  }
}
const dataDir = env.JANUS_CONFIG_DIR || '/tmp/janus';
const conf = writeJanusConfig({
  dataDir,
  wsPort: Number(env.JANUS_WS_PORT || 8188),
  adminPort: Number(env.JANUS_ADMIN_PORT || 7188),
  adminSecret: env.JANUS_ADMIN_SECRET,
  roomAdminKey: env.JANUS_ROOM_ADMIN_KEY,
  rtpPortRange: env.JANUS_RTP_PORT_RANGE || '40000-40999',
  // Loopback: only the media-agent beside it (same pod / network namespace) talks to the Janus API.
  host: env.JANUS_API_HOST || '127.0.0.1',
  natMapping: env.JANUS_NAT_1_1_MAPPING || undefined,
});
const janus = spawn('janus', ['-F', conf, '-o'], { stdio: 'inherit' });
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => janus.kill(signal));
janus.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
