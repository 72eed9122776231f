import { DomainError, type MediaAgentCommand, type MediaRoomListing } from '@switchboard/contracts';
import type { MediaAgents } from './media-control-agent.js';
import type { MediaDomainEvent } from './media-control-context.js';
import { connectionEventOf } from './media-control.testing.js';
import { MediaControlRun, type MediaControlReads } from './media-control-run.js';
import { reconcilePass, type HeldConnectionsReader, type MediaConnectionFailer } from './media-reconcile.js';
import type { HeldConnection } from './media-reconcile-plan.js';

/** A fake agent: records commands, answers with what `answer` says (an error is thrown). */
class FakeAgents implements MediaAgents {
  readonly sent: Array<{ server: string; command: MediaAgentCommand }> = [];
  constructor(
    private readonly answer: (command: MediaAgentCommand, attempt: number) => unknown = () => ({}),
    readonly servers = new Set(['janus-1']),
  ) {}
  async send(server: string, command: MediaAgentCommand): Promise<never> {
    this.sent.push({ server, command });
    const attempt = this.sent.filter((s) => JSON.stringify(s.command) === JSON.stringify(command)).length;
    const answer = this.answer(command, attempt);
    if (answer instanceof Error) throw answer;
    return answer as never;
  }
  async janusServers() {
    return this.servers;
  }
}

function reads(overrides: Partial<MediaControlReads> = {}): MediaControlReads {
  return {
    currentMutes: async (intents) => intents.map((i) => ({ audioMuted: i.audioMuted, videoMuted: i.videoMuted })),
    currentRecording: async (intents) => intents.map((i) => i.recording),
    channelActive: async () => false,
    ...overrides,
  };
}

const noSleep = async () => undefined;
/** The commands sent, without the recording starts and stops every settings update also asks for. */
const notRecords = (agents: FakeAgents) => agents.sent.filter((s) => s.command.kind !== 'connection.record');
const kinds = (agents: FakeAgents) => notRecords(agents).map((s) => s.command.kind);

describe('media control run', () => {
  it('acknowledges events that ask nothing without asking the servers', async () => {
    const agents = new FakeAgents();
    const events = [connectionEventOf({ type: 'connection.stats', connectionId: 'a' })];
    const outcome = await new MediaControlRun(agents, reads(), noSleep).run(events);
    expect(outcome).toEqual(expect.objectContaining({ done: [0], failed: [] }));
    expect(agents.sent).toEqual([]);
  });

  it('sends the mutes as the settings are now: a stale redelivered mute does not undo a later unmute', async () => {
    const agents = new FakeAgents();
    const events = [
      connectionEventOf({ type: 'connection.updated', connectionId: 'a', audioMuted: true }),
      connectionEventOf({ type: 'connection.updated', connectionId: 'gone', audioMuted: true }),
    ];
    const now = reads({
      currentMutes: async (intents) =>
        intents.map((i) => (i.connectionId === 'gone' ? null : { audioMuted: false, videoMuted: false })),
    });
    const outcome = await new MediaControlRun(agents, now, noSleep).run(events);
    expect(notRecords(agents).map((s) => s.command)).toEqual([
      expect.objectContaining({ kind: 'connections.moderate', connectionIds: ['a'], audioMuted: false }),
    ]);
    expect(outcome.done).toEqual([0, 1]);
    expect(outcome.sent).toEqual(
      expect.arrayContaining([{ kind: 'connections.moderate', delayMs: expect.any(Number) }]),
    );
  });

  it('starts Janus recording of a publisher (or mcu participant) that connects recorded, and stops it as the settings say now', async () => {
    const agents = new FakeAgents(() => ({ recording: true }));
    const events = [
      connectionEventOf({ type: 'connection.connected', connectionId: 'rec', recording: true, origin: 'server' }),
      connectionEventOf({ type: 'connection.connected', connectionId: 'plain', origin: 'server' }),
      connectionEventOf({ type: 'connection.updated', connectionId: 'down', remoteConnectionId: 'rec' }),
      connectionEventOf({ type: 'connection.updated', connectionId: 'stop', recording: true }),
      connectionEventOf({ type: 'connection.connected', connectionId: 'mix', connectionType: 'mcu', recording: true }),
    ];
    const now = reads({
      currentRecording: async (intents) => intents.map((i) => (i.connectionId === 'stop' ? false : i.recording)),
    });
    const outcome = await new MediaControlRun(agents, now, noSleep).run(events);
    const records = agents.sent.filter((s) => s.command.kind === 'connection.record');
    expect(records.map((s) => s.command)).toEqual([
      { kind: 'connection.record', applicationId: 'app', channelId: 'ch', connectionId: 'rec', recording: true },
      { kind: 'connection.record', applicationId: 'app', channelId: 'ch', connectionId: 'stop', recording: false },
      // An mcu participant is recorded at the mixer (its AudioBridge leg).
      { kind: 'connection.record', applicationId: 'app', channelId: 'ch', connectionId: 'mix', recording: true },
    ]);
    expect(outcome.done).toEqual([0, 1, 2, 3, 4]);
  });

  it('counts NotFound as done and tries transient errors again', async () => {
    const agents = new FakeAgents((command, attempt) => {
      if (command.kind === 'connection.leave') return new DomainError('NotFound', 'no such connection');
      if (attempt < 3) return new DomainError(attempt === 1 ? 'Timeout' : 'Unavailable', 'busy');
      return { kicked: [] };
    });
    const events = [
      connectionEventOf({ type: 'connection.closed', origin: 'client', connectionId: 'a' }),
      connectionEventOf({ type: 'connection.closed', connectionId: 'b', kicked: true }),
    ];
    let keptAlive = 0;
    const outcome = await new MediaControlRun(agents, reads(), noSleep).run(events, () => keptAlive++);
    expect(outcome.failed).toEqual([]);
    // The events in hand are kept alive before every try (retries may outlast the ack wait).
    expect(keptAlive).toBe(agents.sent.length);
    expect(kinds(agents).sort()).toEqual([
      'connection.leave',
      'connections.kick',
      'connections.kick',
      'connections.kick',
    ]);
  });

  it('fails only the events of a command out of attempts or refused', async () => {
    const agents = new FakeAgents((command) =>
      command.kind === 'connections.kick'
        ? new DomainError('Unavailable', 'agent down')
        : command.kind === 'connection.leave'
          ? new DomainError('ValidationFailed', 'bad')
          : {},
    );
    const events = [
      connectionEventOf({ type: 'connection.closed', connectionId: 'k', kicked: true }),
      connectionEventOf({ type: 'connection.closed', origin: 'client', connectionId: 'l' }),
      connectionEventOf({ type: 'connection.updated', connectionId: 'm', audioMuted: true }),
    ];
    const outcome = await new MediaControlRun(agents, reads(), noSleep).run(events);
    expect(outcome.done).toEqual([2]);
    expect(outcome.failed).toEqual([0, 1]);
    expect(kinds(agents).filter((k) => k === 'connections.kick')).toHaveLength(3);
    expect(kinds(agents).filter((k) => k === 'connection.leave')).toHaveLength(1);
  });

  it('sends one server its mutes, then its ends, then its destroys; a channel active again keeps its room', async () => {
    const agents = new FakeAgents();
    const deactivated = (channelId: string) =>
      ({
        applicationId: 'app',
        organizationId: 'org',
        event: { type: 'channel.deactivated', origin: 'client', timestamp: 1, channel: { id: channelId } },
      }) as unknown as MediaDomainEvent;
    const events = [
      deactivated('ch'),
      connectionEventOf({ type: 'connection.closed', origin: 'client', connectionId: 'a' }),
      connectionEventOf({ type: 'connection.updated', connectionId: 'b', channelId: 'busy', audioMuted: true }),
      deactivated('busy'),
    ];
    const active = reads({ channelActive: async (_, channelId) => channelId === 'busy' });
    const outcome = await new MediaControlRun(agents, active, noSleep).run(events);
    expect(outcome.done).toEqual([0, 1, 2, 3]);
    expect(kinds(agents)).toEqual(['connections.moderate', 'connection.leave', 'room.destroy', 'mixer.destroy']);
  });
});

describe('media reconciliation pass', () => {
  it('lists every Janus server, then removes what the registry does not hold and fails what Janus lost', async () => {
    const listing: MediaRoomListing[] = [
      {
        applicationId: 'app',
        channelId: 'ch',
        connections: [
          { connectionId: 'a', role: 'publisher' },
          { connectionId: 'x', role: 'publisher' },
        ],
      },
      { applicationId: 'app', channelId: 'old', connections: [] },
    ];
    const agents = new FakeAgents((command) =>
      command.kind === 'rooms.list' ? { rooms: listing } : new DomainError('NotFound', 'gone'),
    );
    const connection = (connectionId: string): HeldConnection => ({
      applicationId: 'app',
      channelId: 'ch',
      userId: 'u',
      deviceId: 'd',
      clientId: 'c',
      connectionId,
      type: 'sfu',
      state: 'connected',
      openedAt: 0,
      connectedAt: 1,
    });
    const order: string[] = [];
    const held: HeldConnectionsReader = {
      onServers: async () => {
        order.push(`read after ${kinds(agents).join(',')}`);
        return new Map([['janus-1', [connection('a'), connection('lost')]]]);
      },
      now: async () => 60_000,
    };
    const failed: string[] = [];
    const failer: MediaConnectionFailer = { failLostConnection: async (c) => void failed.push(c.connectionId) };
    const result = await reconcilePass(agents, held, failer, 5000);
    expect(order).toEqual(['read after rooms.list']);
    expect(agents.sent.slice(1).map((s) => s.command)).toEqual([
      { kind: 'room.destroy', applicationId: 'app', channelId: 'old' },
      { kind: 'connection.leave', applicationId: 'app', channelId: 'ch', connectionId: 'x' },
    ]);
    expect(failed).toEqual(['lost']);
    expect(result.servers).toBe(1);
  });
});
