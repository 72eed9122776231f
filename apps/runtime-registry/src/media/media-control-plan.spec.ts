import type { MediaDomainEvent } from './media-control-context.js';
import { connectionEventOf, JANUS, SIMULATED, type EventSpec } from './media-control.testing.js';
import { mediaIntent, planCommands, type MediaIntent } from './media-control-plan.js';

const janus = new Set([JANUS]);
const intents = (...specs: EventSpec[]): Array<MediaIntent | null> =>
  specs.map((s) => mediaIntent(connectionEventOf(s)));

describe('media control plan', () => {
  it('groups the mutes of one settings write per server and channel into one moderate per flag pair', () => {
    const plan = planCommands(
      intents(
        { type: 'connection.updated', connectionId: 'a', audioMuted: true },
        { type: 'connection.updated', connectionId: 'b', audioMuted: true },
        { type: 'connection.updated', connectionId: 'x', audioMuted: false },
        { type: 'connection.updated', connectionId: 'c', audioMuted: true, channelId: 'other' },
      ),
      janus,
    );
    expect(plan.mute.map((c) => ({ ...c.command, sources: c.sources }))).toEqual([
      {
        kind: 'connections.moderate',
        applicationId: 'app',
        channelId: 'ch',
        connectionIds: ['a', 'b'],
        audioMuted: true,
        videoMuted: false,
        sources: [0, 1],
      },
      {
        kind: 'connections.moderate',
        applicationId: 'app',
        channelId: 'ch',
        connectionIds: ['x'],
        audioMuted: false,
        videoMuted: false,
        sources: [2],
      },
      {
        kind: 'connections.moderate',
        applicationId: 'app',
        channelId: 'other',
        connectionIds: ['c'],
        audioMuted: true,
        videoMuted: false,
        sources: [3],
      },
    ]);
  });

  it('mutes mcu participants at the mixer, and leaves downstream sfu connections and client updates alone', () => {
    const plan = planCommands(
      intents(
        { type: 'connection.updated', connectionId: 'm', connectionType: 'mcu', audioMuted: true },
        { type: 'connection.updated', connectionId: 'down', remoteConnectionId: 'a', audioMuted: true },
        { type: 'connection.updated', origin: 'client', connectionId: 'a', audioMuted: true },
      ),
      janus,
    );
    expect(plan.mute.map((c) => c.command)).toEqual([
      { kind: 'mixer.mute', applicationId: 'app', channelId: 'ch', connectionIds: ['m'], muted: true },
    ]);
  });

  it('applies a mute set before the publisher went live once it is connected, and nothing when unmuted', () => {
    const plan = planCommands(
      intents(
        { type: 'connection.connected', origin: 'server', connectionId: 'a', videoMuted: true },
        { type: 'connection.connected', origin: 'server', connectionId: 'b' },
      ),
      janus,
    );
    expect(plan.mute.map((c) => c.command)).toEqual([
      expect.objectContaining({
        kind: 'connections.moderate',
        connectionIds: ['a'],
        audioMuted: false,
        videoMuted: true,
      }),
    ]);
  });

  it('kicks kicked connections together and leaves the others one by one', () => {
    const plan = planCommands(
      intents(
        { type: 'connection.closed', connectionId: 'a', kicked: true },
        { type: 'connection.closed', connectionId: 'b', kicked: true },
        { type: 'connection.closed', origin: 'client', connectionId: 'c' },
        { type: 'connection.failed', origin: 'server', connectionId: 'm', connectionType: 'mcu' },
        { type: 'connection.closed', connectionId: 'k', connectionType: 'mcu', kicked: true },
      ),
      janus,
    );
    expect(plan.end.map((c) => c.command)).toEqual([
      { kind: 'connections.kick', applicationId: 'app', channelId: 'ch', connectionIds: ['a', 'b'] },
      { kind: 'mixer.kick', applicationId: 'app', channelId: 'ch', connectionIds: ['k'] },
      { kind: 'connection.leave', applicationId: 'app', channelId: 'ch', connectionId: 'c' },
      { kind: 'mixer.leave', applicationId: 'app', channelId: 'ch', connectionId: 'm' },
    ]);
  });

  it('sends no mute for a connection the same group ends, and the end carries the mute event', () => {
    const plan = planCommands(
      intents(
        { type: 'connection.updated', connectionId: 'a', audioMuted: true },
        { type: 'connection.closed', origin: 'client', connectionId: 'a' },
      ),
      janus,
    );
    expect(plan.mute).toEqual([]);
    expect(plan.end).toEqual([expect.objectContaining({ sources: [0, 1] })]);
  });

  it('takes the latest mute of a connection in the group', () => {
    const plan = planCommands(
      intents(
        { type: 'connection.updated', connectionId: 'a', audioMuted: true },
        { type: 'connection.updated', connectionId: 'a', audioMuted: false },
      ),
      janus,
    );
    expect(plan.mute.map((c) => [c.command, c.sources])).toEqual([
      [expect.objectContaining({ connectionIds: ['a'], audioMuted: false }), [0, 1]],
    ]);
  });

  it('commands nothing for servers without an agent, nor for peer connections', () => {
    const plan = planCommands(
      intents(
        { type: 'connection.updated', connectionId: 'a', audioMuted: true, server: SIMULATED },
        { type: 'connection.closed', connectionId: 'b', kicked: true, server: SIMULATED },
      ),
      janus,
    );
    expect([...plan.mute, ...plan.end, ...plan.destroy]).toEqual([]);
    expect(
      mediaIntent(connectionEventOf({ type: 'connection.closed', connectionId: 'p', connectionType: 'peer' })),
    ).toBe(null);
  });

  it('destroys a deactivated channel room and mixer on every Janus server', () => {
    const deactivated = {
      applicationId: 'app',
      organizationId: 'org',
      event: { type: 'channel.deactivated', origin: 'client', timestamp: 1, channel: { id: 'ch' }, connection: null },
    } as unknown as MediaDomainEvent;
    const plan = planCommands([mediaIntent(deactivated)], new Set(['j1', 'j2']));
    expect(plan.destroy.map((c) => [c.mediaServerId, c.command.kind, c.destroysChannel])).toEqual([
      ['j1', 'room.destroy', true],
      ['j1', 'mixer.destroy', true],
      ['j2', 'room.destroy', true],
      ['j2', 'mixer.destroy', true],
    ]);
  });

  it('splits a group larger than the contract allows', () => {
    const specs = Array.from({ length: 1001 }, (_, i) => ({
      type: 'connection.updated',
      connectionId: `c${i}`,
      audioMuted: true,
    }));
    const plan = planCommands(intents(...specs), janus);
    expect(plan.mute.map((c) => (c.command as { connectionIds: string[] }).connectionIds.length)).toEqual([1000, 1]);
  });
});
