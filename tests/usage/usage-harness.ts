/**
 * Test harness of the usage tests: builds real EventInfo-shaped domain events (checked against
 * the contract schema), publishes them to the JetStream stream of a namespace, asks
 * usage-aggregator over NATS, and watches its durable consumer and its tables.
 */
import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  EventInfo,
  eventStreamName,
  eventSubject,
  validator,
  type CallerScope,
  type DomainEvent,
  type ForwardedQueryOptions,
  type ODataListResponse,
  type UsageRecord,
  type WebhookEventConnection,
  type WebhookEventName,
} from '@switchboard/contracts';
import { waitFor } from '@switchboard/testing';
import pg from 'pg';

const eventInfo = validator(EventInfo);
const decoder = new TextDecoder();

export const MIN = 60_000;
export const HOUR = 3_600_000;

/** A participant of a scripted session: one client with one connection in one channel. */
export interface Participant {
  applicationId: string;
  organizationId: string;
  channelId: string;
  userId: string;
  deviceId: string;
  clientId: string;
  connectionId: string;
  hasVideo: boolean;
}

export function participant(
  applicationId: string,
  organizationId: string,
  name: string,
  hasVideo: boolean,
  channelId = 'room-1',
): Participant {
  return {
    applicationId,
    organizationId,
    channelId,
    userId: `user-${name}`,
    deviceId: `device-${name}`,
    clientId: `client-${name}`,
    connectionId: `conn-${name}-${randomUUID()}`,
    hasVideo,
  };
}

type State = WebhookEventConnection['state'];

const STATE_OF: Partial<Record<WebhookEventName, State>> = {
  'connection.connected': 'connected',
  'connection.updated': 'connected',
  'connection.stats': 'connected',
  'connection.closed': 'closed',
  'connection.failed': 'failed',
};

function stats(timestamp: number, frame: { width: number; height: number } | null) {
  return {
    timestamp,
    bytesSent: 1000,
    bytesReceived: 1000,
    packetsSent: 10,
    packetsReceived: 10,
    packetsLost: 0,
    jitter: 1,
    roundTripTime: 20,
    sendBitrate: 64000,
    receiveBitrate: 64000,
    frameWidth: frame?.width ?? null,
    frameHeight: frame?.height ?? null,
    frameRate: frame ? 30 : null,
  };
}

function clientPart(p: Participant) {
  return {
    id: p.clientId,
    userId: p.userId,
    userAlias: null,
    deviceId: p.deviceId,
    deviceAlias: null,
    tag: null,
    roles: [],
    applicationId: p.applicationId,
    stats: null,
  };
}

function channelPart(p: Participant) {
  return { id: p.channelId, applicationId: p.applicationId, channelRecording: null };
}

function owned(p: Pick<Participant, 'applicationId' | 'organizationId'>, event: EventInfo): DomainEvent {
  // Every event of the tests is a valid EventInfo: the aggregator is fed what the producer may send.
  return { event: eventInfo.parse(event), applicationId: p.applicationId, organizationId: p.organizationId };
}

/** A connection event; `frame` attaches a stats sample with that frame size. */
export function connectionEvent(
  type: WebhookEventName,
  p: Participant,
  at: number,
  frame: { width: number; height: number } | null = null,
): DomainEvent {
  const state = STATE_OF[type] ?? 'connected';
  const connection: WebhookEventConnection = {
    id: p.connectionId,
    applicationId: p.applicationId,
    channelId: p.channelId,
    userId: p.userId,
    userAlias: null,
    deviceId: p.deviceId,
    deviceAlias: null,
    clientId: p.clientId,
    clientTag: null,
    clientRoles: [],
    externalId: null,
    tag: null,
    type: 'sfu',
    state,
    isSip: false,
    error: state === 'failed' ? { code: 'ice-failed', message: 'ICE failed' } : null,
    remoteConnectionId: null,
    recording: false,
    recordingTag: null,
    hasAudio: true,
    hasVideo: p.hasVideo,
    hasData: false,
    audioDirection: 'sendrecv',
    videoDirection: p.hasVideo ? 'sendrecv' : 'inactive',
    dataDirection: 'inactive',
    localAudioMuted: false,
    localVideoMuted: false,
    localAudioDisabled: false,
    localVideoDisabled: false,
    remoteAudioDisabled: false,
    remoteVideoDisabled: false,
    stats: frame || type === 'connection.stats' ? stats(at, frame) : null,
    connectionRecording: null,
  };
  return owned(p, {
    id: randomUUID(),
    timestamp: at,
    origin: 'client',
    type,
    forced: false,
    channel: channelPart(p),
    client: clientPart(p),
    connection,
    message: null,
  });
}

/** A message a participant sent: to its channel (`channel.client.message`) or to a client (`client.message`). */
export function messageEvent(
  type: 'channel.client.message' | 'client.message' | 'channel.server.message',
  p: Participant,
  at: number,
  text = 'hello',
): DomainEvent {
  const message = {
    message: text,
    clientTag: null,
    clientRoles: [],
    deviceId: p.deviceId,
    deviceAlias: null,
    userId: p.userId,
    userAlias: null,
  };
  return owned(p, {
    id: randomUUID(),
    timestamp: at,
    origin: type === 'channel.server.message' ? 'api' : 'client',
    type,
    forced: false,
    channel: type === 'client.message' ? null : channelPart(p),
    client: type === 'channel.server.message' ? null : clientPart(p),
    connection: null,
    message,
  });
}

export function clientLeftEvent(p: Participant, at: number): DomainEvent {
  return owned(p, {
    id: randomUUID(),
    timestamp: at,
    origin: 'client',
    type: 'channel.client.left',
    forced: false,
    channel: channelPart(p),
    client: clientPart(p),
    connection: null,
    message: null,
  });
}

/** What the usage list answers. */
export type UsageAnswer = ODataListResponse<Partial<UsageRecord>>;

export interface MinutesByBucket {
  [maxPixelCount: number]: number;
}

/** `{ hour ISO: { messages, minutes: { bucket: minutes } } }` of an answer, for whole-answer comparisons. */
export function summarize(answer: UsageAnswer): Record<string, { messages: number; minutes: MinutesByBucket }> {
  const out: Record<string, { messages: number; minutes: MinutesByBucket }> = {};
  for (const r of answer.value) {
    const minutes: MinutesByBucket = {};
    for (const e of r.participantMinutes ?? []) {
      expect(e.value.maxPixelCount).toBe(e.key);
      minutes[e.key] = e.value.usageParticipantMinutes!;
    }
    out[r.startTimestamp!] = { messages: r.participantMessages!, minutes };
  }
  return out;
}

export class UsageHarness {
  readonly js: JetStreamClient;
  private jsmPromise: Promise<JetStreamManager>;

  constructor(
    readonly nc: NatsConnection,
    readonly ns: string,
    readonly databaseUrl: string,
  ) {
    this.js = jetstream(nc);
    this.jsmPromise = jetstreamManager(nc);
  }

  jsm(): Promise<JetStreamManager> {
    return this.jsmPromise;
  }

  /** Publishes one event; `msgId` defaults to the event id (what the producer sends as Nats-Msg-Id). */
  async publish(e: DomainEvent, msgId = e.event.id): Promise<void> {
    await this.js.publish(eventSubject(this.ns, e.event.type), JSON.stringify(e), { msgID: msgId });
  }

  async publishAll(events: DomainEvent[], msgIdOf?: (e: DomainEvent) => string): Promise<void> {
    for (const e of events) await this.publish(e, msgIdOf ? msgIdOf(e) : e.event.id);
  }

  /**
   * The raw NATS answer of the usage list (`usage-aggregator.v1.usage.list`, management-api's envelope): `{ response }`
   * or `{ err }`.
   */
  async ask(request: Record<string, unknown>) {
    const subject = 'usage-aggregator.v1.usage.list';
    const msg = await this.nc.request(
      `${this.ns}.${subject}`,
      JSON.stringify({ pattern: subject, id: randomUUID(), data: request }),
      { timeout: 10000 },
    );
    return JSON.parse(decoder.decode(msg.data)) as {
      response?: UsageAnswer;
      err?: { code: string; message: string; details?: Array<{ field?: string; message: string }> };
    };
  }

  async query(
    scope: CallerScope,
    applicationId: string,
    startTimestamp: number | null,
    endTimestamp: number | null,
    options: ForwardedQueryOptions = {},
  ): Promise<UsageAnswer> {
    const answer = await this.ask({ scope, applicationId, startTimestamp, endTimestamp, query: options });
    if (answer.err) throw new Error(`usage query failed: ${JSON.stringify(answer.err)}`);
    return answer.response!;
  }

  /** Waits until the durable consumer has every message of the stream delivered and acknowledged. */
  async drained(timeoutMs = 60000): Promise<void> {
    const jsm = await this.jsm();
    await waitFor(
      async () => {
        const stream = await jsm.streams.info(eventStreamName(this.ns));
        const consumer = await jsm.consumers.info(eventStreamName(this.ns), 'usage-aggregator');
        return (
          consumer.num_pending === 0 &&
          consumer.num_ack_pending === 0 &&
          consumer.ack_floor.stream_seq >= stream.state.last_seq
        );
      },
      { timeoutMs, intervalMs: 100, description: 'usage-aggregator to acknowledge every event of the stream' },
    );
  }

  async sql<T extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<T[]> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    await client.connect();
    try {
      return (await client.query<T>(text, params)).rows;
    } finally {
      await client.end();
    }
  }

  async processedCount(): Promise<number> {
    const [row] = await this.sql<{ n: number }>('SELECT count(*)::int AS n FROM usage.processed_event');
    return row!.n;
  }

  /** Every usage row, for "nothing changed" comparisons. */
  async ledger(): Promise<unknown> {
    return {
      minutes: await this.sql(
        'SELECT application_id, organization_id, hour_start, max_pixel_count, participant_ms FROM usage.hourly_minutes ORDER BY 1, 2, 3, 4',
      ),
      messages: await this.sql(
        'SELECT application_id, organization_id, hour_start, participant_messages FROM usage.hourly_messages ORDER BY 1, 2, 3',
      ),
      connections: await this.sql('SELECT * FROM usage.connection ORDER BY application_id, connection_id'),
      processed: await this.processedCount(),
    };
  }
}

/**
 * A backlog of 2,080 events of `applicationId` on 2025-03-01: 40 participants, each connected for
 * 47 minutes from 09:30 + i minutes (buckets alternate 1280x720 / audio-only), and 50 channel
 * messages each, spread over 09:00..10:59. `phase2` holds the closes of the last 20, to publish
 * later than the rest; `expected` is the usage of hours 9 and 10 once both are applied (`summarize`'s
 * shape).
 */
export function backlogScenario(
  applicationId: string,
  organizationId: string,
): {
  phase1: DomainEvent[];
  phase2: DomainEvent[];
  expected: Record<string, { messages: number; minutes: MinutesByBucket }>;
} {
  const at = (h: number, m = 0) => Date.UTC(2025, 2, 1, h, m);
  const people = Array.from({ length: 40 }, (_, i) => participant(applicationId, organizationId, `p${i}`, i % 2 === 0));
  const phase1: DomainEvent[] = [];
  const phase2: DomainEvent[] = [];
  const expectedMs = new Map<string, number>();
  const book = (hour: number, bucket: number, ms: number) =>
    expectedMs.set(`${hour}:${bucket}`, (expectedMs.get(`${hour}:${bucket}`) ?? 0) + ms);
  const messages = new Map<number, number>();
  people.forEach((p, i) => {
    const start = at(9, 30 + i);
    const end = start + 47 * MIN;
    const bucket = p.hasVideo ? 921600 : 0;
    phase1.push(connectionEvent('connection.connected', p, start, p.hasVideo ? { width: 1280, height: 720 } : null));
    for (let k = 0; k < 50; k++) {
      const t = at(9) + (((i * 50 + k) * 3001) % (2 * HOUR));
      phase1.push(messageEvent('channel.client.message', p, t));
      messages.set(t - (t % HOUR), (messages.get(t - (t % HOUR)) ?? 0) + 1);
    }
    (i < 20 ? phase1 : phase2).push(connectionEvent('connection.closed', p, end));
    const split = Math.min(end, at(10));
    if (split > start) book(at(9), bucket, split - start);
    if (end > at(10)) book(at(10), bucket, end - Math.max(start, at(10)));
  });
  const expected: Record<string, { messages: number; minutes: MinutesByBucket }> = {};
  for (const hour of [at(9), at(10)]) {
    const minutes: MinutesByBucket = {};
    for (const bucket of [0, 921600]) {
      const ms = expectedMs.get(`${hour}:${bucket}`);
      if (ms) minutes[bucket] = ms / MIN;
    }
    expected[new Date(hour).toISOString()] = { messages: messages.get(hour) ?? 0, minutes };
  }
  return { phase1, phase2, expected };
}
