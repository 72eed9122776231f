import {
  canTransition,
  checkClientTokenTimes,
  ClientTokenError,
  clientTokenSignatureValid,
  CONNECTION_TRANSITIONS,
  decodeBase64Segment,
  decodeClientToken,
  EdgeSchemas,
  EdgeValidators,
  encodeClientToken,
  isTerminalState,
  SYNC_REQUEST_DATA,
  SYNC_REQUEST_TYPES,
} from './index.js';
import { CONNECTION_STATES } from '../interface-a/runtime.js';
import type { ClientTokenPayload } from '../webhooks/client-token.js';

/** What `action` throws (undefined when it returns). */
function thrownBy(action: () => unknown): unknown {
  try {
    action();
  } catch (e) {
    return e;
  }
  return undefined;
}

const payload: ClientTokenPayload = {
  iat: 1_700_000_000,
  exp: 1_700_000_600,
  type: 'register',
  applicationId: 'app-1',
  userId: 'u-1',
  deviceId: 'd-1',
  clientId: 'c-1',
  clientRoles: ['host'],
  channels: [{ id: 'room-1', disableSendVideo: true }],
};

describe('client token codec', () => {
  it('writes standard padded Base64 by default and reads it back', () => {
    const token = encodeClientToken(payload, 'sécret');
    const [header, body, signature] = token.split('.');
    expect(JSON.parse(Buffer.from(header!, 'base64').toString())).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(JSON.parse(Buffer.from(body!, 'base64').toString())).toEqual(payload);
    expect(signature).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    const decoded = decodeClientToken(token);
    expect(decoded.payload).toEqual(payload);
    expect(clientTokenSignatureValid(decoded, 'sécret')).toBe(true);
    expect(clientTokenSignatureValid(decoded, 'secret')).toBe(false);
  });

  it('accepts base64url, padded or not', () => {
    const token = encodeClientToken({ ...payload, channels: [{ id: '>>>???' }] }, 's', 'base64url');
    expect(token).not.toMatch(/[+/=]/);
    expect(clientTokenSignatureValid(decodeClientToken(token), 's')).toBe(true);
    const padded = token
      .split('.')
      .map((p) => p + '='.repeat((4 - (p.length % 4)) % 4))
      .join('.');
    expect(decodeClientToken(padded).payload.channels).toEqual([{ id: '>>>???' }]);
  });

  it('signs the segments exactly as sent: re-encoding a segment breaks the signature', () => {
    const [h, b, s] = encodeClientToken(payload, 's').split('.') as [string, string, string];
    const reencoded = `${h}.${Buffer.from(b, 'base64').toString('base64url')}.${s}`;
    expect(clientTokenSignatureValid(decodeClientToken(reencoded), 's')).toBe(false);
  });

  it.each([
    ['', 'malformed'],
    ['a.b', 'malformed'],
    ['a..c', 'malformed'],
    ['a.b.c.d', 'malformed'],
    ['!!!.e30=.AAAA', 'malformed'],
    [`${Buffer.from('{"alg":"none"}').toString('base64')}.e30=.AAAA`, 'unsupported-algorithm'],
    [`${Buffer.from('[1]').toString('base64')}.e30=.AAAA`, 'malformed'],
    [
      `${Buffer.from('{"alg":"HS256"}').toString('base64')}.${Buffer.from('not json').toString('base64')}.AAAA`,
      'malformed',
    ],
    [`${Buffer.from('{"alg":"HS256"}').toString('base64')}.e30=.AAAA`, 'invalid-payload'],
  ])('refuses %j as %s', (token, reason) => {
    expect(() => decodeClientToken(token)).toThrow(expect.objectContaining({ reason }));
  });

  it('names the offending payload fields', () => {
    const token = encodeClientToken({ ...payload, type: 'admin', exp: 'soon' } as never, 's');
    const refusal = thrownBy(() => decodeClientToken(token));
    expect(refusal).toBeInstanceOf(ClientTokenError);
    expect((refusal as ClientTokenError).details.map((d) => d.field).sort()).toEqual(['exp', 'type']);
  });

  it('ignores claims it does not use (RFC 7519), as tokens minted by other issuers carry them', () => {
    const token = encodeClientToken(
      { ...payload, iss: 'https://issuer.example', jti: 'abc', region: 'eu' } as never,
      's',
    );
    expect(decodeClientToken(token).payload).toEqual(
      expect.objectContaining({ applicationId: payload.applicationId, jti: 'abc' }),
    );
    // The claims it does use keep their shapes, nbf included.
    expect(() => decodeClientToken(encodeClientToken({ ...payload, nbf: 'later' } as never, 's'))).toThrow(
      expect.objectContaining({ reason: 'invalid-payload' }),
    );
  });

  it('refuses tokens longer than the bound', () => {
    expect(() => decodeClientToken(`${'A'.repeat(20000)}.e30=.AAAA`)).toThrow(
      expect.objectContaining({ reason: 'malformed' }),
    );
  });

  it('decodes Base64 segments strictly', () => {
    expect(decodeBase64Segment('e30=')?.toString()).toBe('{}');
    expect(decodeBase64Segment('e30')?.toString()).toBe('{}');
    expect(decodeBase64Segment('e3 0=')).toBeUndefined();
    expect(decodeBase64Segment('e30==')).toBeUndefined();
    expect(decodeBase64Segment('a+b_')).toBeUndefined();
    expect(decodeBase64Segment('a')).toBeUndefined();
  });

  it('checks exp and iat with the clock skew', () => {
    expect(() => checkClientTokenTimes(payload, payload.exp + 30, 30)).not.toThrow();
    expect(() => checkClientTokenTimes(payload, payload.exp + 31, 30)).toThrow(
      expect.objectContaining({ reason: 'expired' }),
    );
    expect(() => checkClientTokenTimes(payload, payload.iat - 31, 30)).toThrow(
      expect.objectContaining({ reason: 'not-yet-valid' }),
    );
    expect(() => checkClientTokenTimes({ ...payload, nbf: payload.iat + 100 }, payload.iat + 69, 30)).toThrow(
      expect.objectContaining({ reason: 'not-yet-valid' }),
    );
    expect(() => checkClientTokenTimes({ ...payload, nbf: payload.iat + 100 }, payload.iat + 70, 30)).not.toThrow();
    expect(() => checkClientTokenTimes({ ...payload, exp: payload.iat - 1 }, payload.iat, 30)).toThrow(
      expect.objectContaining({ reason: 'invalid-payload' }),
    );
  });
});

describe('connection state machine', () => {
  it('covers every state and walks new → connected → failing → failed, and closing → closed', () => {
    expect(Object.keys(CONNECTION_TRANSITIONS).sort()).toEqual([...CONNECTION_STATES].sort());
    const walk = ['new', 'initializing', 'connecting', 'connected', 'failing', 'failed'] as const;
    for (let i = 1; i < walk.length; i++) expect(canTransition(walk[i - 1]!, walk[i]!)).toBe(true);
    expect(canTransition('connected', 'closing')).toBe(true);
    expect(canTransition('closing', 'closed')).toBe(true);
  });

  it('refuses skips, going back, and leaving a final state', () => {
    expect(canTransition('new', 'connected')).toBe(false);
    expect(canTransition('connected', 'connecting')).toBe(false);
    expect(canTransition('failed', 'closing')).toBe(false);
    expect(canTransition('closed', 'new')).toBe(false);
    expect(isTerminalState('failed') && isTerminalState('closed')).toBe(true);
    expect(CONNECTION_STATES.filter(isTerminalState)).toEqual(['failed', 'closed']);
  });
});

describe('sync frame schemas', () => {
  it('gives every object schema of the registry a unique $id and closes it', () => {
    for (const [name, schema] of Object.entries(EdgeSchemas)) {
      expect(schema.$id).toBe(name);
      expect(schema.additionalProperties).toBe(false);
    }
  });

  it('has a data schema for every request type', () => {
    expect(Object.keys(SYNC_REQUEST_DATA).sort()).toEqual([...SYNC_REQUEST_TYPES].sort());
  });

  it('reads request frames and names what is wrong', () => {
    expect(EdgeValidators.SyncRequestFrame.check({ id: 1, type: 'join', data: { channelId: 'x' } })).toBe(true);
    expect(EdgeValidators.SyncRequestFrame.check({ id: 'a', type: 'ping' })).toBe(true);
    expect(
      EdgeValidators.SyncRequestFrame.errors({ id: -1, type: 'fly', more: 1 })
        .map((e) => e.field)
        .sort(),
    ).toEqual(['id', 'more', 'type']);
    expect(
      EdgeValidators.SyncConnectionOpenData.errors({
        channelId: 'c',
        type: 'sfu',
        streams: { audio: { direction: 'up' } },
      }).map((e) => e.field),
    ).toEqual(['streams.audio.direction']);
    expect(EdgeValidators.SyncJoinData.errors({ channelId: 'bad\u0001id' }).map((e) => e.field)).toEqual(['channelId']);
  });
});
