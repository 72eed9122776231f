import { canonical, diff, logText, redactAlways, redactKeys } from './change-log.js';

const caller = { organizationId: 'org', principal: 'key-1', operator: false };

describe('change log', () => {
  it('writes one record per changed property, objects as canonical JSON', () => {
    const rows = diff(
      {
        entityType: 'ChannelConfig',
        entityId: 'id-1',
        type: 'Update',
        before: { priority: 1, codec: { vp8: { bitrate: 1 } }, tag: 'same' },
        after: { priority: 2, codec: { vp8: { bitrate: 1 } }, tag: 'same', added: { b: 1, a: [2] } },
        properties: ['priority', 'codec', 'tag', 'added'],
      },
      caller,
      42,
    );
    expect(rows.map((r) => [r.propertyName, r.oldValue, r.newValue, r.type, r.changedOn, r.changedBy])).toEqual([
      ['priority', '1', '2', 'Update', 42, 'key-1'],
      ['added', null, '{"a":[2],"b":1}', 'Update', 42, 'key-1'],
    ]);
  });

  it('skips properties without a value on create and redacts secrets', () => {
    const rows = diff(
      {
        entityType: 'ApplicationConfig',
        entityId: 'x',
        type: 'Create',
        before: null,
        after: { tag: null, sharedSecret: 's3cr3t', rtmp: { url: 'u', secretKey: 'k' } },
        properties: ['tag', 'sharedSecret', 'rtmp'],
        redact: { sharedSecret: redactAlways, rtmp: redactKeys('secretKey') },
      },
      caller,
      1,
    );
    expect(rows.map((r) => [r.propertyName, r.oldValue, r.newValue])).toEqual([
      ['sharedSecret', null, '<redacted>'],
      ['rtmp', null, '{"secretKey":"<redacted>","url":"u"}'],
    ]);
  });

  it('prints values as text', () => {
    expect(logText('a')).toBe('a');
    expect(logText(0)).toBe('0');
    expect(logText(false)).toBe('false');
    expect(logText(null)).toBeNull();
    expect(canonical({ b: 1, a: { d: 1, c: 2 } })).toBe('{"a":{"c":2,"d":1},"b":1}');
  });
});
