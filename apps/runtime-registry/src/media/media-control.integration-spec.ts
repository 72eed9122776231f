/**
 * The media control against a fake media-agent on the real NATS (the registry in this process, real
 * Redis and JetStream): only `janus` servers are commanded, a command the agent could not take
 * comes again once it is back, one it refuses for good is parked, and the reconciliation runs.
 */
import { randomUUID } from 'node:crypto';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import {
  eventStreamName,
  MediaAgentSubjects,
  parkedStreamName,
  type Heartbeat,
  type MediaAgentCommand,
  type WireError,
} from '@switchboard/contracts';
import { flushRedisPrefix, testNamespace, testServers, waitFor } from '@switchboard/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import {
  claim,
  natsConnection,
  OPERATOR,
  RegistryClient,
  registerReport,
  registryEnv,
  startRegistry,
  type TestClient,
} from '../testing/harness.testing.js';

const ORG = 'org-media-control';
const APP = 'app-media-control';
const CHANNEL = 'room';
const JANUS = randomUUID();
const SIMULATED = randomUUID();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function heartbeat(id: string, type?: string): Heartbeat {
  return {
    role: 'mediaserver',
    ...(type ? { type } : {}),
    server: { id, region: null, version: '1', addresses: [], active: true, lastHeartbeat: new Date().toISOString() },
  };
}

/** A media-agent answering on NATS as the real one does; `refuse` answers an error instead. */
class FakeAgent {
  readonly commands: MediaAgentCommand[] = [];
  refuse: WireError | null = null;
  private sub?: Subscription;

  constructor(
    private readonly nc: NatsConnection,
    private readonly ns: string,
    readonly id: string,
  ) {}

  async start(): Promise<void> {
    this.sub = this.nc.subscribe(`${this.ns}.${MediaAgentSubjects.command(this.id)}`, {
      callback: (_e, msg) => {
        const packet = msg.json<{ data: MediaAgentCommand; id: string }>();
        this.commands.push(packet.data);
        const answer = this.refuse ? { err: this.refuse } : { response: answerOf(packet.data) };
        msg.respond(JSON.stringify({ ...answer, id: packet.id, isDisposed: true }));
      },
    });
    await this.nc.flush();
  }

  stop(): void {
    this.sub?.unsubscribe();
  }

  of(kind: MediaAgentCommand['kind']): MediaAgentCommand[] {
    return this.commands.filter((c) => c.kind === kind);
  }
}

function answerOf(command: MediaAgentCommand): unknown {
  if (command.kind === 'rooms.list')
    return { rooms: [{ applicationId: APP, channelId: 'stale-room', connections: [] }] };
  if (command.kind === 'connections.moderate') return { moderated: command.connectionIds };
  return {};
}

describe('media control with a fake media-agent', () => {
  const ns = testNamespace('media_control');
  let nc: NatsConnection;
  let rt: RegistryClient;
  let registry: Awaited<ReturnType<typeof startRegistry>>;
  let janus: FakeAgent;
  let simulated: FakeAgent;
  let beating: NodeJS.Timeout;
  const placed = new Map<string, string>();

  const clientOf = (userId: string): TestClient => ({
    applicationId: APP,
    userId,
    deviceId: `${userId}-d`,
    clientId: `${userId}-c`,
  });
  // A channel keeps its media server: the publishers are in two channels, one on each server.
  const channels = [CHANNEL, `${CHANNEL}-b`];
  const mute = async (audioMuted: boolean) => {
    for (const channelId of channels)
      await rt.command(OPERATOR, {
        kind: 'update',
        origin: 'api',
        target: { level: 'channel', applicationId: APP, channelId, patch: { audioMuted } },
      });
  };
  const channelOfPublisher = new Map<string, string>();
  const moderatedTo = (audioMuted: boolean) =>
    janus.of('connections.moderate').filter((c) => c.kind === 'connections.moderate' && c.audioMuted === audioMuted);

  beforeAll(async () => {
    nc = await natsConnection();
    rt = new RegistryClient(nc, ns);
    janus = new FakeAgent(nc, ns, JANUS);
    simulated = new FakeAgent(nc, ns, SIMULATED);
    await Promise.all([janus.start(), simulated.start()]);
    const beat = () => Promise.all([rt.heartbeat(heartbeat(JANUS, 'janus')), rt.heartbeat(heartbeat(SIMULATED))]);
    await beat();
    beating = setInterval(() => void beat(), 300);
    registry = await startRegistry(
      registryEnv(ns, { EVENT_MAX_ATTEMPTS: '3', MEDIA_AGENT_TIMEOUT_MS: '300', MEDIA_RECONCILE_INTERVAL_MS: '1000' }),
    );
    await waitFor(
      async () => (await rt.query(OPERATOR, 'mediaservers.list', {})).filter((m) => m.active).length === 2,
      { description: 'both media servers heard' },
    );
    // Six publishers in two channels: placement puts each channel on its own server.
    for (let i = 0; i < 6; i++) {
      const c = clientOf(`u${i}`);
      const channelId = channels[i % 2]!;
      channelOfPublisher.set(`cn${i}`, channelId);
      await rt.edge(registerReport(c, ORG, 'gw'));
      await rt.edge({ kind: 'client.join', client: c, channelId, claim: claim(channelId) });
      const opened = await rt.edge({
        kind: 'connection.open',
        client: c,
        channelId,
        connectionId: `cn${i}`,
        type: 'sfu',
        tag: null,
        streams: { audio: { direction: 'sendrecv' } },
      });
      placed.set(`cn${i}`, opened.mediaServerId!);
    }
    // The media control's consumer is made once the event stream exists, from then on: the test's writes come after.
    const jsm = await jetstreamManager(nc);
    await waitFor(
      () =>
        jsm.consumers.info(eventStreamName(ns), 'media-control').then(
          () => true,
          () => false,
        ),
      { timeoutMs: 10000, description: 'the media-control consumer' },
    );
  }, 30000);

  afterAll(async () => {
    clearInterval(beating);
    janus?.stop();
    simulated?.stop();
    await registry?.app.close();
    const jsm = await jetstreamManager(nc);
    for (const stream of [eventStreamName(ns), parkedStreamName(ns)])
      await jsm.streams.delete(stream).catch(() => undefined);
    await nc?.close();
    await flushRedisPrefix(testServers().redisUrl, `${ns}:`);
  });

  it('mutes the connections of the janus server in grouped commands, and commands nothing on a server without agent', async () => {
    const onJanus = [...placed].filter(([, server]) => server === JANUS).map(([id]) => id);
    expect(onJanus.length).toBeGreaterThan(0);
    expect(onJanus.length).toBeLessThan(placed.size);
    await mute(true);
    await mute(true);
    const mutedIds = () => moderatedTo(true).flatMap((c) => (c as { connectionIds: string[] }).connectionIds);
    await waitFor(() => onJanus.every((id) => mutedIds().includes(id)), {
      description: 'every janus connection muted',
    });
    const janusChannel = channelOfPublisher.get(onJanus[0]!);
    expect(moderatedTo(true)).toEqual(
      moderatedTo(true).map(() => expect.objectContaining({ applicationId: APP, channelId: janusChannel })),
    );
    expect(mutedIds().sort()).toEqual([...onJanus].sort());
    // Grouped: the write's events go together (one command, or two when a group is cut by load).
    expect(moderatedTo(true).length).toBeLessThan(Math.max(2, onJanus.length));
    await sleep(300);
    expect(simulated.commands.filter((c) => c.kind !== 'rooms.list')).toEqual([]);
    // Created from new events on: the past is the reconciliation's, not replayed at first deployment.
    const consumer = await (await jetstreamManager(nc)).consumers.info(eventStreamName(ns), 'media-control');
    expect(consumer.config.deliver_policy).toBe('new');
  });

  it('a mute the agent could not take (agent down) is carried out once the agent is back', async () => {
    janus.stop();
    await mute(false);
    await sleep(700);
    expect(moderatedTo(false)).toEqual([]);
    await janus.start();
    await waitFor(() => moderatedTo(false).length > 0, { timeoutMs: 8000, description: 'the unmute after the outage' });
  });

  it('a command the agent refuses for good is parked after EVENT_MAX_ATTEMPTS deliveries', async () => {
    janus.refuse = { code: 'ValidationFailed', message: 'refused by the test' };
    const jsm = await jetstreamManager(nc);
    const parkedBefore = await jsm.streams
      .info(parkedStreamName(ns))
      .then((i) => i.state.messages)
      .catch(() => 0);
    const onJanus = [...placed].find(([, server]) => server === JANUS)![0];
    const user = `u${onJanus.slice(2)}`;
    const channelId = channelOfPublisher.get(onJanus)!;
    await rt.edge({ kind: 'connection.close', client: clientOf(user), channelId, connectionId: onJanus });
    await waitFor(
      async () =>
        (await jsm.streams
          .info(parkedStreamName(ns))
          .then((i) => i.state.messages)
          .catch(() => 0)) > parkedBefore,
      { timeoutMs: 15000, description: 'the refused event parked' },
    );
    // Refused for good: not tried again within a delivery; three deliveries, then parked.
    expect(janus.of('connection.leave')).toHaveLength(3);
    janus.refuse = null;
  });

  it('the reconciliation destroys a room of a channel the registry holds nothing of on that server', async () => {
    await waitFor(() => janus.of('room.destroy').some((c) => 'channelId' in c && c.channelId === 'stale-room'), {
      timeoutMs: 5000,
      description: 'room.destroy of the stale room',
    });
    expect(simulated.of('rooms.list')).toEqual([]);
  });
});
