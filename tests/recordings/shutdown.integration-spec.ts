/**
 * recording-service stopped (SIGTERM) while it muxes: the ffmpeg run is killed rather than waited
 * for (it may take minutes; the process is forced out 2 s after SHUTDOWN_TIMEOUT_MS, which left
 * ffmpeg running as an orphan outside a container), the process exits cleanly, and the mux step goes
 * back to the queue without using an attempt: the next start finishes the recording.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { waitFor } from '@switchboard/testing';
import { ffmpegAvailable } from '../../tools/media/media.mjs';
import {
  connectionEvent,
  publish,
  query,
  scopeOf,
  simConnection,
  startHarness,
  writeMediaFor,
  type Harness,
} from './harness.js';

const ORG = `org-${randomUUID()}`;
const APP = 'stop-app';
const CH = 'stop-room';
const scope = scopeOf(ORG);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('recording-service stopped while it muxes', () => {
  let h: Harness;
  let dir: string;

  beforeAll(async () => {
    if (!(await ffmpegAvailable()))
      throw new Error('ffmpeg and ffprobe are required by the recording tests (apt-get install ffmpeg)');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-slow-ffmpeg-'));
    // An ffmpeg that never finishes: it writes its pid down, then sleeps (exec: the same pid).
    fs.writeFileSync(path.join(dir, 'ffmpeg'), `#!/bin/sh\necho $$ >> "${path.join(dir, 'pids')}"\nexec sleep 600\n`, {
      mode: 0o755,
    });
    h = await startHarness('stop', { SHUTDOWN_TIMEOUT_MS: '5000' });
    await h.start({ FFMPEG_PATH: path.join(dir, 'ffmpeg'), LOG_LEVEL: 'info' });
  }, 60_000);

  afterAll(async () => {
    await h?.close();
    for (const pid of fs.existsSync(path.join(dir, 'pids'))
      ? fs.readFileSync(path.join(dir, 'pids'), 'utf8').split('\n').filter(Boolean).map(Number)
      : []) {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('kills ffmpeg, exits cleanly, and the next start muxes the recording', async () => {
    const t0 = Date.now() - 60_000;
    const ines = simConnection({
      organizationId: ORG,
      applicationId: APP,
      channelId: CH,
      userId: 'ines',
      connectionId: 'ines-cam',
      recording: true,
    });
    await publish(h, [
      connectionEvent('connection.connected', ines, t0),
      connectionEvent('connection.closed', { ...ines, state: 'closed' }, t0 + 2000),
    ]);
    await waitFor(
      async () =>
        (await query(h, scope, { kind: 'channel.connectionRecordings.list', applicationId: APP, channelId: CH }))[0]
          ?.stopTimestamp,
      { timeoutMs: 15000 },
    );
    await writeMediaFor(h, ines);
    const pidFile = path.join(dir, 'pids');
    const [pid] = await waitFor(
      () => (fs.existsSync(pidFile) ? fs.readFileSync(pidFile, 'utf8').split('\n').filter(Boolean).map(Number) : null),
      {
        timeoutMs: 30000,
        intervalMs: 100,
        description: 'the mux step to start ffmpeg',
      },
    );
    expect(alive(pid!)).toBe(true);

    // Before, the stop waited for ffmpeg until the service kit forced the process out (exit code 1).
    expect(await h.service.stop('SIGTERM', 20000)).toEqual({ code: 0, signal: null });
    await waitFor(() => !alive(pid!), { timeoutMs: 5000, description: 'ffmpeg to be gone' });
    expect(h.service.output()).toMatch(/recording mux interrupted by the stop; handed back/);

    await h.start({ FFMPEG_PATH: 'ffmpeg' });
    const [recording] = await waitFor(
      async () => {
        const list = await query(h, scope, { kind: 'channel.recordings.list', applicationId: APP, channelId: CH });
        return list[0]?.ready ? list : null;
      },
      { timeoutMs: 30000, intervalMs: 250, description: 'the recording to be muxed after the restart' },
    );
    expect(recording!.fileSize).toBeGreaterThan(0);
    const metrics = await (await fetch(`${h.service.url}/metrics`)).text();
    // The handed-back step ran once more as a first attempt: no failed attempt was counted.
    expect(metrics).toMatch(/recording_pipeline_steps_total\{step="mux",outcome="done"[^}]*\} 1/);
    expect(metrics).not.toMatch(/recording_pipeline_steps_total\{step="mux",outcome="retry"/);
  }, 120_000);
});
