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
    const thrown = thrownBy(() =>
      toRuntimeCommand('KickConnection', 'app', {
        channelId: 'ch',
        userId: null,
        deviceId: 'd',
        clientId: '',
        connectionId: null,
      }),
    );
    expect(thrown).toBeInstanceOf(DomainError);
    expect((thrown as DomainError).details.map((d) => d.field)).toEqual(['userId', 'clientId', 'connectionId']);
  });
});

/** What `action` throws; undefined when it returns. */
function thrownBy(action: () => unknown): unknown {
  try {
    action();
    return undefined;
  } catch (e) {
    return e;
  }
}
