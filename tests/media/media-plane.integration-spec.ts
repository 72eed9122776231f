/**
 * The media tests with WebRTC flowing (`tests/media/*.netns-spec.ts`) run in a private network
 * namespace (tools/testing/media-netns.mjs): Janus gathers no ICE candidates on a loopback
 * interface, so they need the namespace's `ifb` device on 127.0.1.1. This test runs them there in
 * a jest of their own and passes on its verdict and output.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '@switchboard/testing';
import { mediaNetnsUnavailable } from '../../tools/testing/media-netns.mjs';

const INNER_TIMEOUT_MS = 600_000;

function runInNamespace(args: string[]): Promise<{ code: number | null; output: string }> {
  const root = repoRoot();
  const child = spawn(process.execPath, [path.join(root, 'tools/testing/media-netns.mjs'), ...args], {
    cwd: root,
    env: { ...process.env, FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGTERM'), INNER_TIMEOUT_MS);
  return new Promise((resolve) => {
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('media tests in the media network namespace', () => {
  it(
    'pass (real Janus, media-agent, NATS and WebRTC clients in one private network namespace)',
    async () => {
      expect(mediaNetnsUnavailable()).toBeNull();
      const jest = path.join(repoRoot(), 'node_modules/jest/bin/jest.js');
      const { code, output } = await runInNamespace([
        process.execPath,
        '--experimental-vm-modules',
        jest,
        '--config',
        'tools/testing/jest.media.config.mjs',
        '--runInBand',
        '--ci',
        '--verbose',
      ]);
      // The inner jest's report, so a failure shows which media test failed and why.
      if (code !== 0) throw new Error(`the media tests failed (exit ${code}):\n${output}`);
      expect(output).toMatch(/Tests:\s+\d+ passed, \d+ total/);
      // The inner tests and their figures (jest prints the outer test's name only).
      process.stdout.write(
        output
          .split('\n')
          .filter((line) => /✓|✕|○| ms$|^(Tests|Time):/.test(line))
          .join('\n'),
      );
    },
    INNER_TIMEOUT_MS + 10_000,
  );
});
