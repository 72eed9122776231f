/**
 * What the recording tests share: a recording-service process on a fresh database and namespace,
 * NATS requests in Nest's packet format, and EventInfo-shaped DomainEvents published to JetStream
 * the way runtime-registry publishes them (subject `<ns>.events.<type>`, Nats-Msg-Id = event id).
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { connect, headers as natsHeaders, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import {
  eventSubject,
  RecordingSubjects,
  type CallerScope,
  type DomainEvent,
  type RecordingCommand,
  type RecordingQuery,
  type RecordingQueryKind,
  type RecordingQueryResults,
  type RecordingTarget,
  type WebhookEventConnection,
  type WebhookEventName,
} from '@switchboard/contracts';
import { ensureEventStream } from '@switchboard/service-kit';
import {
  createTestDatabase,
  flushRedisPrefix,
  freePort,
  serviceTestEnv,
  spawnService,
  testNamespace,
  testServers,
  type SpawnedService,
  type TestDatabase,
} from '@switchboard/testing';
import { writeConnectionMedia, type WrittenMedia } from '../../tools/media/media.mjs';

export const URL_SECRET = 'test-only-url-secret-0123456789abcdefghijklmnop';

export interface Harness {
  ns: string;
  db: TestDatabase;
  nc: NatsConnection;
  env: Record<string, string>;
  workDir: string;
  storageDir: string;
  service: SpawnedService;
  start(extra?: Record<string, string>): Promise<SpawnedService>;
  close(): Promise<void>;
}

/**
 * `ns`: join a namespace other services of the test already use (default: a fresh one). `db`: a
 * database of the test's own (e.g. on a server it crashes) instead of a clone of the shared template.
 */
export async function startHarness(
  label: string,
  extra: Record<string, string> = {},
  ns = testNamespace(label),
  db?: TestDatabase,
): Promise<Harness> {
  const servers = testServers();
  db ??= await createTestDatabase(label);
  const nc = await connect({ servers: servers.natsUrl });
  const root = path.join(servers.dataDir, 'recordings', ns);
  const env: Record<string, string> = {
    ...serviceTestEnv(ns, db.url),
    LOG_LEVEL: process.env.SB_TEST_SERVICE_LOG_LEVEL ?? 'warn',
    RECORDINGS_DIR: path.join(root, 'work'),
    RECORDINGS_STORAGE_DIR: path.join(root, 'storage'),
    RECORDINGS_URL_SECRET: URL_SECRET,
    RECORDINGS_SWEEP_INTERVAL_MS: '500',
    RECORDINGS_INGEST_TIMEOUT_MS: '30000',
    ...extra,
  };
  await ensureEventStream(await jetstreamManager(nc), ns);
  const h: Harness = {
    ns,
    db,
    nc,
    env,
    workDir: env.RECORDINGS_DIR!,
    storageDir: env.RECORDINGS_STORAGE_DIR!,
    service: undefined as unknown as SpawnedService,
    async start(more = {}) {
      h.service = await spawnService('recording-service', { ...env, ...more, HTTP_PORT: String(await freePort()) });
      return h.service;
    },
    async close() {
      if (process.env.SB_TEST_VERBOSE === '1') {
        process.stdout.write(`\n----- recording-service output -----\n${h.service?.output() ?? ''}\n`);
        const client = new pg.Client({ connectionString: db.url });
        await client.connect();
        const rows = await client.query(
          'SELECT id, channel_id, stage, error, stop_timestamp, ingested, ready FROM recording.channel_recording',
        );
        const crs = await client.query(
          'SELECT id, user_id, stop_timestamp, ingested, audio_file_path, video_file_path, closed_reason FROM recording.connection_recording',
        );
        process.stdout.write(`${JSON.stringify(rows.rows, null, 1)}\n${JSON.stringify(crs.rows, null, 1)}\n`);
        await client.end();
      }
      await h.service?.stop();
      await nc.close();
      await flushRedisPrefix(servers.redisUrl, `${ns}:`);
      await db.drop();
    },
  };
  return h;
}

const decoder = new TextDecoder();

export class RequestFailed extends Error {
  constructor(readonly wire: { code: string; message: string; details?: Array<{ field?: string; message: string }> }) {
    super(`${wire.code}: ${wire.message}`);
  }
}

/** A request in Nest's packet format; rejects with RequestFailed carrying the WireError. */
export async function natsRequest<T>(nc: NatsConnection, ns: string, subject: string, data: unknown): Promise<T> {
  const h = natsHeaders();
  h.set('x-correlation-id', randomUUID());
  const msg = await nc.request(`${ns}.${subject}`, JSON.stringify({ pattern: subject, data, id: randomUUID() }), {
    timeout: 10000,
    headers: h,
  });
  const reply = JSON.parse(decoder.decode(msg.data)) as { response?: T; err?: RequestFailed['wire'] };
  if (reply.err) throw new RequestFailed(reply.err);
  return reply.response as T;
}

export function query<K extends RecordingQueryKind>(
  h: Harness,
  scope: CallerScope,
  q: { kind: K } & Omit<Extract<RecordingQuery, { kind: K }>, 'kind'>,
): Promise<RecordingQueryResults[K]> {
  return natsRequest(h.nc, h.ns, RecordingSubjects.query, { scope, query: q });
}

export function command(h: Harness, scope: CallerScope, c: RecordingCommand): Promise<null> {
  return natsRequest(h.nc, h.ns, RecordingSubjects.command, { scope, command: c });
}

export const OPERATOR: CallerScope = { organizationId: null, operator: true, principal: 'test-operator' };
export const scopeOf = (organizationId: string): CallerScope => ({
  organizationId,
  operator: false,
  principal: randomUUID(),
});

// ---------------------------------------------------------------------------------------------
// Simulated clients
// ---------------------------------------------------------------------------------------------

export interface SimConnection {
  organizationId: string;
  applicationId: string;
  channelId: string;
  userId: string;
  deviceId: string;
  clientId: string;
  connectionId: string;
  hasAudio: boolean;
  hasVideo: boolean;
  tag: string | null;
  recording: boolean;
  recordingTag: string | null;
  audioMuted: boolean;
  videoMuted: boolean;
  audioDisabled: boolean;
  videoDisabled: boolean;
  state: WebhookEventConnection['state'];
}

export function simConnection(
  o: Partial<SimConnection> &
    Pick<SimConnection, 'organizationId' | 'applicationId' | 'channelId' | 'userId' | 'connectionId'>,
): SimConnection {
  return {
    deviceId: `${o.userId}-device`,
    clientId: `${o.userId}-client`,
    hasAudio: true,
    hasVideo: true,
    tag: null,
    recording: false,
    recordingTag: null,
    audioMuted: false,
    videoMuted: false,
    audioDisabled: false,
    videoDisabled: false,
    state: 'connected',
    ...o,
  };
}

/** A `connection.*` DomainEvent as the runtime publishes it, with the connection's current state. */
export function connectionEvent(type: WebhookEventName, c: SimConnection, timestamp: number): DomainEvent {
  const connection: WebhookEventConnection = {
    id: c.connectionId,
    applicationId: c.applicationId,
    channelId: c.channelId,
    userId: c.userId,
    userAlias: null,
    deviceId: c.deviceId,
    deviceAlias: null,
    clientId: c.clientId,
    clientTag: null,
    clientRoles: [],
    externalId: null,
    tag: c.tag,
    type: 'sfu',
    state: c.state,
    isSip: false,
    error: null,
    remoteConnectionId: null,
    recording: c.recording,
    recordingTag: c.recordingTag,
    hasAudio: c.hasAudio,
    hasVideo: c.hasVideo,
    hasData: false,
    audioDirection: c.hasAudio ? 'sendonly' : 'inactive',
    videoDirection: c.hasVideo ? 'sendonly' : 'inactive',
    dataDirection: 'inactive',
    localAudioMuted: c.audioMuted,
    localVideoMuted: c.videoMuted,
    localAudioDisabled: c.audioDisabled,
    localVideoDisabled: c.videoDisabled,
    remoteAudioDisabled: false,
    remoteVideoDisabled: false,
    stats: null,
    connectionRecording: null,
  };
  return {
    event: {
      id: randomUUID(),
      timestamp,
      origin: 'client',
      type,
      forced: false,
      channel: { id: c.channelId, applicationId: c.applicationId, channelRecording: null },
      client: {
        id: c.clientId,
        userId: c.userId,
        userAlias: null,
        deviceId: c.deviceId,
        deviceAlias: null,
        tag: null,
        roles: [],
        applicationId: c.applicationId,
        stats: null,
      },
      connection,
      message: null,
    },
    applicationId: c.applicationId,
    organizationId: c.organizationId,
  };
}

/** Publishes to JetStream; `withMsgId: false` simulates a publisher retry past the duplicate window. */
export async function publish(h: Harness, events: DomainEvent[], { withMsgId = true } = {}): Promise<void> {
  const js = jetstream(h.nc);
  for (const e of events) {
    await js.publish(eventSubject(h.ns, e.event.type), JSON.stringify(e), withMsgId ? { msgID: e.event.id } : {});
  }
}

/** Every domain event published under the namespace from now on (core NATS sees JetStream publishes). */
export function watchEvents(h: Harness): { events: DomainEvent[]; sub: Subscription } {
  const events: DomainEvent[] = [];
  const sub = h.nc.subscribe(`${h.ns}.events.>`, {
    callback: (_err, msg) => {
      events.push(JSON.parse(decoder.decode(msg.data)) as DomainEvent);
    },
  });
  return { events, sub };
}

/** The media server side: writes the connection's files where the service expects them. */
export async function writeMediaFor(
  h: Harness,
  c: SimConnection,
  frequency = 440,
): Promise<{ target: RecordingTarget; written: WrittenMedia }> {
  const target = await query(h, OPERATOR, {
    kind: 'media.recordingTarget',
    applicationId: c.applicationId,
    channelId: c.channelId,
    connectionId: c.connectionId,
  });
  const written = await writeConnectionMedia(target, { frequency });
  return { target, written };
}
