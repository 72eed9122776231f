import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RecordingPaths } from './paths.js';
import { LocalStorage } from './storage.js';

describe('LocalStorage.put', () => {
  let dir: string;
  let storage: LocalStorage;
  let paths: RecordingPaths;
  const key = 'org/app/room/rec-1/room.webm';

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-storage-'));
    paths = new RecordingPaths(path.join(dir, 'work'), path.join(dir, 'store'));
    storage = new LocalStorage(paths);
    fs.mkdirSync(paths.workRoot, { recursive: true });
  });

  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('moves the work file to its key', async () => {
    const work = path.join(paths.workRoot, 'room.webm');
    fs.writeFileSync(work, 'twelve bytes');
    expect(await storage.put(work, key)).toEqual({ location: paths.storagePath(key), key, size: 12 });
    expect(fs.existsSync(work)).toBe(false);
    expect(fs.readFileSync(paths.storagePath(key), 'utf8')).toBe('twelve bytes');
  });

  it('takes a work file an earlier, cut-off attempt already moved as stored', async () => {
    const work = path.join(paths.workRoot, 'room.webm');
    fs.writeFileSync(work, 'twelve bytes');
    await storage.put(work, key);
    // The step failed after this file (before recording where it went) and runs again.
    expect(await storage.put(work, key)).toEqual({ location: paths.storagePath(key), key, size: 12 });
  });

  it('still fails when the work file is missing and nothing was stored', async () => {
    await expect(storage.put(path.join(paths.workRoot, 'never-written.webm'), key)).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });
});
