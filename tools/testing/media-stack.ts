import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import Janode from 'janode';
import VideoRoomPlugin from 'janode/plugins/videoroom';
import {
  DomainError,
  MediaAgentSubjects,
  type MediaAgentCommand,
  type MediaAgentEvent,
  type MediaAgentEventEnvelope,
  type MediaAgentResults,
  type WireError,
} from '@switchboard/contracts';
import {
  freePort,
  serviceTestEnv,
  spawnService,
  testNamespace,
  testServers,
  type SpawnedService,
} from '@switchboard/testing';
import { startTestJanus, type TestJanus } from './janus.js';

/**
 * A real Janus and its media-agent on the run's NATS, for the tests in the media network namespace
 * (`*.netns-spec.ts`): commands sent as the control plane sends them, events collected, and Janus's
 * handles counted through the Admin API.
 */
export interface MediaStack {
  readonly mediaServerId: string;
  readonly janus: TestJanus;
  /** The running agent (a new one after `restartAgent`). */
  readonly agent: SpawnedService;
  /** Stops the agent (SIGKILL by default: a crash) and starts a new one with the same settings and id. */
  restartAgent(signal?: NodeJS.Signals): Promise<void>;
  /** The VideoRoom rooms Janus holds, asked on a Janus session of the test's own. */
  janusRooms(): Promise<Array<{ room: number; description?: string }>>;
  /** Every event the agent published, in order. */
  readonly events: MediaAgentEvent[];
  command<K extends MediaAgentCommand['kind']>(
    command: Extract<MediaAgentCommand, { kind: K }>,
  ): Promise<MediaAgentResults[K]>;
  /** Sends any body (for refusals). */
  rawCommand(body: unknown): Promise<unknown>;
  /** Handles Janus holds over all its sessions (Admin API). */
  janusHandles(): Promise<number>;
  stop(): Promise<void>;
}

// janode logs to the console in its own format; the test reports what matters.
Janode.Logger.setLevel('none');

/** `options.namespace`: the NATS namespace to run the agent in (a spec's own services share it). */
export async function startMediaStack(
  agentEnv: Record<string, string> = {},
  options: { namespace?: string } = {},
): Promise<MediaStack> {
  const ns = options.namespace ?? testNamespace('media');
  const mediaServerId = randomUUID();
  const janus = await startTestJanus();
  const nc: NatsConnection = await connect({ servers: testServers().natsUrl });
  const events: MediaAgentEvent[] = [];
  nc.subscribe(`${ns}.${MediaAgentSubjects.events(mediaServerId)}`, {
    callback: (_err, msg) => void events.push(msg.json<{ data: MediaAgentEventEnvelope }>().data.event),
  });
  const spawnAgent = async () =>
    spawnService('media-agent', {
      ...serviceTestEnv(ns),
      HTTP_PORT: String(await freePort()),
      JANUS_URL: janus.wsUrl,
      JANUS_ADMIN_URL: janus.adminUrl,
      JANUS_ADMIN_SECRET: janus.adminSecret,
      JANUS_ROOM_ADMIN_KEY: janus.roomAdminKey,
      MEDIA_SERVER_ID: mediaServerId,
      MEDIA_SERVER_ADDRESSES: 'udp://127.0.1.1:40000-40999',
      ...agentEnv,
    });
  let agent: SpawnedService;
  try {
    agent = await spawnAgent();
  } catch (e) {
    await janus.stop();
    await nc.close();
    throw e;
  }
  const subject = MediaAgentSubjects.command(mediaServerId);
  const rawCommand = async (body: unknown) => {
    const msg = await nc.request(
      `${ns}.${subject}`,
      JSON.stringify({ pattern: subject, data: body, id: randomUUID() }),
      {
        timeout: 5000,
      },
    );
    const reply = msg.json<{ response?: unknown; err?: WireError }>();
    if (!reply.err) return reply.response;
    const error = DomainError.fromWire(reply.err);
    // The details (which field) in the message, so a failing test says why.
    if (error.details.length) error.message += ` ${JSON.stringify(error.details)}`;
    throw error;
  };
  return {
    mediaServerId,
    janus,
    get agent() {
      return agent;
    },
    events,
    async restartAgent(signal: NodeJS.Signals = 'SIGKILL') {
      await agent.stop(signal);
      agent = await spawnAgent();
    },
    async janusRooms() {
      const connection = await Janode.connect({ address: { url: janus.wsUrl } });
      try {
        const session = await connection.create();
        const handle = await session.attach(VideoRoomPlugin);
        return (await handle.list({ admin_key: janus.roomAdminKey })).list;
      } finally {
        await connection.close().catch(() => undefined);
      }
    },
    command: (command) => rawCommand(command) as never,
    rawCommand,
    async janusHandles() {
      const admin = await Janode.connect({
        is_admin: true,
        address: { url: janus.adminUrl, apisecret: janus.adminSecret },
      });
      try {
        const { sessions } = await admin.listSessions();
        const lists = await Promise.all(sessions.map((id) => admin.listHandles(id)));
        return lists.reduce((sum, list) => sum + list.handles.length, 0);
      } finally {
        await admin.close().catch(() => undefined);
      }
    },
    async stop() {
      await agent.stop();
      await janus.stop();
      await nc.close();
    },
  };
}
