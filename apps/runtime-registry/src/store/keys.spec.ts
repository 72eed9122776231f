import fc from 'fast-check';
import { clientMember, esc, RegistryKeys, splitMember, unesc } from './keys.js';

describe('key layout', () => {
  it('escapes any id reversibly, with no separator or hash tag character left', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), (id) => {
        const e = esc(id);
        expect(unesc(e)).toBe(id);
        expect(e).not.toMatch(/[/:{}\s]/);
      }),
    );
  });

  it('composite members split back into their ids', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (u, d, c) => {
        expect(splitMember(clientMember(u, d, c))).toEqual([u, d, c]);
      }),
    );
  });

  it('every key of an application carries its hash tag; servers share one', () => {
    const k = new RegistryKeys('sb:');
    const keys = [
      k.app('a{b}'),
      k.appClients('a{b}'),
      k.channelPart('a{b}', 'ch/1', 'conns'),
      k.connectionCfg('a{b}', 'ch', 'u', 'd', 'c', 'n'),
      k.clientCfg('a{b}', 'ch', 'u:1', 'd', 'c'),
    ];
    for (const key of keys) expect(key.startsWith('sb:rt:app:{a%7Bb%7D}')).toBe(true);
    expect(k.appOf(k.app('a{b}'))).toBe('a{b}');
    expect(k.appOf(k.appClients('x'))).toBeNull();
    for (const key of [k.mediaServerLoad(), k.mediaServerStats('m'), k.gatewayClients('g'), k.serverSeen('connector')])
      expect(key).toContain('{servers}');
  });
});
