import { DomainError } from '@switchboard/contracts';
import { toRuntimeCommand } from './runtime-commands.js';

describe('toRuntimeCommand', () => {
  it('maps a message action to its level', () => {
    expect(
      toRuntimeCommand('SendChannelUserMessage', 'app', {
        channelId: 'ch',
        userId: 'u',
        message: { message: 'hi', clientTag: undefined },
      }),
    ).toEqual({
      kind: 'message',
      target: { level: 'channel.user', applicationId: 'app', channelId: 'ch', userId: 'u' },
      message: { message: 'hi' },
      origin: 'api',
    });
  });

  it('renames the client config audio flag and keeps nulls (unchanged)', () => {
    expect(
      toRuntimeCommand('UpdateClient', 'app', {
        channelId: 'ch',
        userId: 'u',
        deviceId: 'd',
        clientId: 'c',
        config: { audioUmuteDisabled: true, videoMuted: null },
      }),
    ).toEqual({
      kind: 'update',
      target: {
        level: 'channel.client',
        applicationId: 'app',
        channelId: 'ch',
        userId: 'u',
        deviceId: 'd',
        clientId: 'c',
        patch: { audioUnmuteDisabled: true, videoMuted: null },
      },
      origin: 'api',
    });
  });

  it('names every id the level needs and lacks', () => {
    try {
      toRuntimeCommand('KickConnection', 'app', {
        channelId: 'ch',
        userId: null,
        deviceId: 'd',
        clientId: '',
        connectionId: null,
      });
      throw new Error('expected a DomainError');
    } catch (e) {
      expect(e).toBeInstanceOf(DomainError);
      expect((e as DomainError).details.map((d) => d.field)).toEqual(['userId', 'clientId', 'connectionId']);
    }
  });
});
