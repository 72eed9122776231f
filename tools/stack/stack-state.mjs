// Where the local stack keeps its data, its generated secrets and stack.json (what runs, with which pids).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './apps.mjs';
import { newJanusSecrets } from './janus.mjs';
import { StackError } from './servers.mjs';

export const STACK_PORTS = Object.freeze({ nats: 14222, redis: 16379, postgres: 15432 });
export const STACK_DATABASE = 'switchboard';
export const SERVER_NAMES = ['nats', 'redis', 'postgres'];
export const SERVER_LABELS = { nats: 'NATS', redis: 'Redis', postgres: 'PostgreSQL', janus: 'Janus' };
/** The service that runs beside Janus: started only when Janus is. */
export const MEDIA_AGENT = 'media-agent';
/** The operator console: it forwards to admin-gateway and management-api, so it starts after them. */
export const CONSOLE = 'console';
/** The demo room: an operator's backend holding the admin API key, so it starts after the bootstrap. */
export const DEMO_ROOM = 'demo-room';
export const EXTERNAL_ENV = { nats: 'NATS_URL', redis: 'REDIS_URL', postgres: 'DATABASE_URL' };
export const READY_TIMEOUT_MS = 60000;
export const SERVICE_STOP_TIMEOUT_MS = 15000;
export const LAUNCHER_MARK = path.join('tools', 'stack', 'cli.mjs');

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
