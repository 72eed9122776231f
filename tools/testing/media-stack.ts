import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import Janode from 'janode';
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
  readonly agent: SpawnedService;
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

export async function startMediaStack(): Promise<MediaStack> {
  const ns = testNamespace('media');
  const mediaServerId = randomUUID();
  const janus = await startTestJanus();
  const nc: NatsConnection = await connect({ servers: testServers().natsUrl });
  const events: MediaAgentEvent[] = [];
  nc.subscribe(`${ns}.${MediaAgentSubjects.events(mediaServerId)}`, {
    callback: (_err, msg) => void events.push(msg.json<{ data: MediaAgentEventEnvelope }>().data.event),
  });
  let agent: SpawnedService;
  try {
    agent = await spawnService('media-agent', {
      ...serviceTestEnv(ns),
      HTTP_PORT: String(await freePort()),
      JANUS_URL: janus.wsUrl,
      JANUS_ADMIN_URL: janus.adminUrl,
      JANUS_ADMIN_SECRET: janus.adminSecret,
      JANUS_ROOM_ADMIN_KEY: janus.roomAdminKey,
      MEDIA_SERVER_ID: mediaServerId,
      MEDIA_SERVER_ADDRESSES: 'udp://127.0.1.1:40000-40999',
    });
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
    agent,
    events,
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
