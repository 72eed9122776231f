import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveMediaServerId } from './media-server-id.js';

describe('resolveMediaServerId', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-agent-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('keeps a generated id in the data directory, so a restart registers the same server', () => {
    const first = resolveMediaServerId(undefined, path.join(dir, 'nested'));
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    expect(resolveMediaServerId(undefined, path.join(dir, 'nested'))).toBe(first);
    expect(fs.readFileSync(path.join(dir, 'nested', 'media-server-id'), 'utf8').trim()).toBe(first);
  });

  it('uses the configured id and writes no file', () => {
    expect(resolveMediaServerId('0b4c7c3e-5f1a-4d8e-9a51-2b1f3c7d9e10', dir)).toBe(
      '0b4c7c3e-5f1a-4d8e-9a51-2b1f3c7d9e10',
    );
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
