import type { MessageTarget } from '@switchboard/contracts';
import { candidateScope, clientMessageTarget, matchesTarget, targetChannel, type ClientKey } from './targets.js';

const a = 'app';
const clients: ClientKey[] = [
  { userId: 'u1', deviceId: 'd1', clientId: 'c1' },
  { userId: 'u1', deviceId: 'd1', clientId: 'c2' },
  { userId: 'u1', deviceId: 'd2', clientId: 'c3' },
  { userId: 'u2', deviceId: 'd1', clientId: 'c4' }, // same device id under another user
  { userId: 'u2', deviceId: 'd3', clientId: 'c1' }, // same client id under another user
];

function pick(target: MessageTarget): string[] {
  return clients.filter((c) => matchesTarget(target, c)).map((c) => `${c.userId}/${c.deviceId}/${c.clientId}`);
}

describe('message targets', () => {
  it('each of the eight levels names exactly its clients', () => {
    expect(pick({ level: 'application', applicationId: a })).toHaveLength(5);
    expect(pick({ level: 'channel', applicationId: a, channelId: 'ch' })).toHaveLength(5);
    expect(pick({ level: 'user', applicationId: a, userId: 'u1' })).toEqual(['u1/d1/c1', 'u1/d1/c2', 'u1/d2/c3']);
    expect(pick({ level: 'channel.user', applicationId: a, channelId: 'ch', userId: 'u2' })).toEqual([
      'u2/d1/c4',
      'u2/d3/c1',
    ]);
    expect(pick({ level: 'device', applicationId: a, userId: 'u1', deviceId: 'd1' })).toEqual(['u1/d1/c1', 'u1/d1/c2']);
    expect(pick({ level: 'channel.device', applicationId: a, channelId: 'ch', userId: 'u2', deviceId: 'd1' })).toEqual([
      'u2/d1/c4',
    ]);
    expect(pick({ level: 'client', applicationId: a, userId: 'u1', deviceId: 'd1', clientId: 'c1' })).toEqual([
      'u1/d1/c1',
    ]);
    expect(
      pick({
        level: 'channel.client',
        applicationId: a,
        channelId: 'ch',
        userId: 'u2',
        deviceId: 'd3',
        clientId: 'c1',
      }),
    ).toEqual(['u2/d3/c1']);
  });

  it('read candidates from the narrowest stored set', () => {
    expect(candidateScope({ level: 'application', applicationId: a })).toEqual({ kind: 'application' });
    for (const level of ['channel', 'channel.user', 'channel.device', 'channel.client'] as const) {
      expect(
        candidateScope({
          level,
          applicationId: a,
          channelId: 'ch',
          userId: 'u',
          deviceId: 'd',
          clientId: 'c',
        } as MessageTarget),
      ).toEqual({ kind: 'channel', channelId: 'ch' });
    }
    expect(candidateScope({ level: 'user', applicationId: a, userId: 'u' })).toEqual({ kind: 'user', userId: 'u' });
    expect(candidateScope({ level: 'device', applicationId: a, userId: 'u', deviceId: 'd' })).toEqual({
      kind: 'device',
      userId: 'u',
      deviceId: 'd',
    });
    expect(candidateScope({ level: 'client', applicationId: a, userId: 'u', deviceId: 'd', clientId: 'c' })).toEqual({
      kind: 'client',
      userId: 'u',
      deviceId: 'd',
      clientId: 'c',
    });
  });

  it('know their channel', () => {
    expect(targetChannel({ level: 'channel.user', applicationId: a, channelId: 'ch', userId: 'u' })).toBe('ch');
    expect(targetChannel({ level: 'user', applicationId: a, userId: 'u' })).toBeNull();
  });
});

describe('client message targets', () => {
  it('inside a channel: everyone, or narrowed to a user, device or client', () => {
    expect(clientMessageTarget(a, 'ch', undefined)).toEqual({ level: 'channel', applicationId: a, channelId: 'ch' });
    expect(clientMessageTarget(a, 'ch', { userId: 'u' })).toEqual({
      level: 'channel.user',
      applicationId: a,
      channelId: 'ch',
      userId: 'u',
    });
    expect(clientMessageTarget(a, 'ch', { userId: 'u', deviceId: 'd' })).toEqual({
      level: 'channel.device',
      applicationId: a,
      channelId: 'ch',
      userId: 'u',
      deviceId: 'd',
    });
    expect(clientMessageTarget(a, 'ch', { userId: 'u', deviceId: 'd', clientId: 'c' })).toEqual({
      level: 'channel.client',
      applicationId: a,
      channelId: 'ch',
      userId: 'u',
      deviceId: 'd',
      clientId: 'c',
    });
  });

  it('outside channels: a user, device or client; nothing named is for the server only', () => {
    expect(clientMessageTarget(a, null, { userId: 'u' })).toEqual({ level: 'user', applicationId: a, userId: 'u' });
    expect(clientMessageTarget(a, null, { userId: 'u', deviceId: 'd' })).toEqual({
      level: 'device',
      applicationId: a,
      userId: 'u',
      deviceId: 'd',
    });
    expect(clientMessageTarget(a, null, { userId: 'u', deviceId: 'd', clientId: 'c' })).toEqual({
      level: 'client',
      applicationId: a,
      userId: 'u',
      deviceId: 'd',
      clientId: 'c',
    });
    expect(clientMessageTarget(a, null, undefined)).toBeNull();
    expect(clientMessageTarget(a, null, {})).toBeNull();
  });
});
