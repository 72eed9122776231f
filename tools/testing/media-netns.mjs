// Runs a command in a private network namespace made for media tests (media-plane-spike.md §2):
// Janus gathers no ICE candidates on a loopback interface, so the namespace has `lo` plus an `ifb`
// device carrying 127.0.1.1/32, which Janus and the WebRTC clients use. Nothing in it reaches the
// host's network, and nothing outside reaches it. Plain Node built-ins only.
//
//   node tools/testing/media-netns.mjs <command> [args...]
//
// Re-executes itself under `unshare -n` (root, or `unshare -rn` with user namespaces), sets up the
// devices, runs the command with stdio inherited and exits with its status.
import { execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const MEDIA_DEVICE = 'jn0';
export const MEDIA_ADDRESS = '127.0.1.1';
const INSIDE = '--inside-media-netns';

/** Why media tests cannot run here (a sentence), or null when they can. */
export function mediaNetnsUnavailable() {
  for (const tool of ['unshare', 'ip', 'janus']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `${tool} is not installed`;
    }
  }
  try {
    execFileSync('unshare', [...unshareFlags(), '--', 'ip', 'link', 'add', MEDIA_DEVICE, 'type', 'ifb'], {
      stdio: 'pipe',
    });
  } catch (error) {
    return `cannot make a network namespace with an ifb device: ${String(error.stderr ?? error.message).trim()}`;
  }
  return null;
}

function unshareFlags() {
  return process.getuid?.() === 0 ? ['-n'] : ['-r', '-n'];
}

function setUpDevices() {
  const ip = (...args) => execFileSync('ip', args, { stdio: 'pipe' });
  ip('link', 'set', 'lo', 'up');
  ip('link', 'add', MEDIA_DEVICE, 'type', 'ifb');
  // No fe80:: address: Janus and the clients would offer it as a candidate.
  execFileSync('sysctl', ['-qw', `net.ipv6.conf.${MEDIA_DEVICE}.disable_ipv6=1`], { stdio: 'pipe' });
  ip('addr', 'add', `${MEDIA_ADDRESS}/32`, 'dev', MEDIA_DEVICE);
  ip('link', 'set', MEDIA_DEVICE, 'up');
}

/** Runs `command` with `args` (stdio inherited) and exits with its status; signals are passed on. */
function runAndExit(command, args, options = {}) {
  const child = spawn(command, args, { stdio: 'inherit', ...options });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (error) => {
    process.stderr.write(`media-netns: ${command}: ${error.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
}

const isMain = process.argv[1] === fileURLToPath(import.meta.url);
if (isMain) {
  const args = process.argv.slice(2);
  if (args[0] === INSIDE) {
    setUpDevices();
    runAndExit(args[1], args.slice(2));
  } else if (args.length === 0) {
    process.stderr.write('usage: node tools/testing/media-netns.mjs <command> [args...]\n');
    process.exit(64);
  } else {
    runAndExit('unshare', [...unshareFlags(), '--', process.execPath, fileURLToPath(import.meta.url), INSIDE, ...args]);
  }
}
