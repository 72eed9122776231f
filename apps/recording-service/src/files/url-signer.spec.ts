import { parseRange, UrlSigner } from './url-signer.js';

const ID = '0b8a7c2e-5d1f-4e3a-9b6c-1f2e3d4c5b6a';

describe('UrlSigner', () => {
  const signer = new UrlSigner('a-secret-that-is-long-enough-for-hmac-keys', 'http://files.example:8083/', 60);

  it('signs a link that verifies until it expires', () => {
    const now = Date.UTC(2030, 0, 1);
    const url = signer.url('channel.audio', ID, now);
    expect(url).toMatch(/^http:\/\/files\.example:8083\/files\/ca\./);
    const token = url.split('/files/')[1]!;
    expect(signer.verify(token, now)).toEqual({ kind: 'channel.audio', recordingId: ID, expiresAt: now / 1000 + 60 });
    expect(signer.verify(token, now + 59_000)).not.toBeNull();
    expect(signer.verify(token, now + 61_000)).toBeNull();
  });

  it('refuses tampered, foreign and malformed tokens', () => {
    const token = signer.token('channel', ID);
    const [kind, id, exp, sig] = token.split('.') as [string, string, string, string];
    expect(signer.verify(`cv.${id}.${exp}.${sig}`)).toBeNull();
    expect(signer.verify(`${kind}.${id}.${Number(exp) + 1000}.${sig}`)).toBeNull();
    expect(signer.verify(`${kind}.${id.replace('0', '1')}.${exp}.${sig}`)).toBeNull();
    expect(new UrlSigner('another-secret-that-is-long-enough-for-hmac', 'http://x', 60).verify(token)).toBeNull();
    for (const bad of ['', 'a.b.c', 'zz.x.1.y', `${token}.extra`, 'x'.repeat(300)])
      expect(signer.verify(bad)).toBeNull();
  });
});

describe('parseRange', () => {
  it('reads one byte range', () => {
    expect(parseRange(undefined, 100)).toBeUndefined();
    expect(parseRange('bytes=0-9', 100)).toEqual({ start: 0, end: 9 });
    expect(parseRange('bytes=90-', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=90-500', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=-10', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=-500', 100)).toEqual({ start: 0, end: 99 });
  });

  it('serves the whole file for what it does not understand, 416 outside the file', () => {
    expect(parseRange('bytes=0-1,5-6', 100)).toBeUndefined();
    expect(parseRange('items=0-1', 100)).toBeUndefined();
    expect(parseRange('bytes=-', 100)).toBeUndefined();
    expect(parseRange('bytes=100-', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=5-2', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=-0', 100)).toBe('unsatisfiable');
  });
});
