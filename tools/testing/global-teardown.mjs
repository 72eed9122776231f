// Jest global teardown: stops the servers of global-setup.mjs by PID and deletes .data/test-<pid>
// (kept when SB_TEST_KEEP_DATA=1, for reading the server logs).
import fs from 'node:fs';
import path from 'node:path';
import { stopServer } from '../stack/servers.mjs';
import { STATE_KEY, testDataDir } from './global-setup.mjs';

function loadState() {
  if (globalThis[STATE_KEY]) return globalThis[STATE_KEY];
  try {
    return JSON.parse(fs.readFileSync(path.join(testDataDir(), 'state.json'), 'utf8'));
  } catch {
    return null;
  }
}

export default async function globalTeardown() {
  const state = loadState();
  if (!state) return;
  const dataDirOf = (name) => path.join(state.dataDir, name === 'postgres' ? 'pg' : name);
  const results = await Promise.allSettled(
    Object.entries(state.pids).map(([name, pid]) =>
      stopServer(name, pid, { dataDir: dataDirOf(name), timeoutMs: 5000 }),
    ),
  );
  delete globalThis[STATE_KEY];
  const failed = results.filter((r) => r.status === 'rejected');
  if (process.env.SB_TEST_KEEP_DATA !== '1' && failed.length === 0)
    fs.rmSync(state.dataDir, { recursive: true, force: true });
  if (failed.length)
    throw new Error(`Could not stop every test server: ${failed.map((f) => f.reason.message).join('; ')}`);
}
