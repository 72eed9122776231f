/**
 * Test kit of the webhook suites: a real HTTP receiver on loopback, a fake management-api answering
 * `management-api.v1.webhooks.resolve` on the real NATS, events published to the real JetStream
 * stream in the DomainEvent shape (exactly what runtime-registry will publish), and the worker as a
 * real process.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { headers as natsHeaders, nanos, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import {
  eventStreamName,
  eventSubject,
  RuntimeSubjects,
  type DomainEvent,
  type EventInfo,
  type ResolvedWebhook,
  type WebhookEventName,
  type WebhooksResolveResponse,
} from '@switchboard/contracts';
import { freePort, spawnService, type SpawnedService } from '@switchboard/testing';
import pg from 'pg';

// ---------------------------------------------------------------------------------------------
// Receiver

export interface Received {
  /** performance-independent wall clock (ms) when the request arrived. */
  at: number;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Header names as they came on the wire (Node lower-cases `headers`' keys). */
  headerNames: string[];
  raw: string;
  body: unknown;
  /** Event ids in the body (one, or the batch). */
  eventIds: string[];
}

/** What the receiver does with a request: answer a status, or drop the connection. */
export type Behaviour = (req: Received, nth: number) => number | 'drop';

export interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  /** Requests per path (`/hook-a`). */
  at(path: string): Received[];
  /** Sets the behaviour of a path (default: 200). */
  on(path: string, behaviour: Behaviour): void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const requests: Received[] = [];
  const behaviours = new Map<string, Behaviour>();
  const countByWebhookId = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = undefined;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const b = body as { id?: string; batch?: Array<{ id: string }> } | undefined;
      const eventIds = b?.batch ? b.batch.map((e) => e.id) : b?.id ? [b.id] : [];
      const path = (req.url ?? '/').split('?')[0]!;
      const r: Received = {
        at: Date.now(),
        path,
        headers: req.headers,
        headerNames: req.rawHeaders.filter((_, i) => i % 2 === 0),
        raw,
        body,
        eventIds,
      };
      requests.push(r);
      const webhookId = String(req.headers['webhook-id'] ?? '');
      const nth = (countByWebhookId.get(webhookId) ?? 0) + 1;
      countByWebhookId.set(webhookId, nth);
      const action = behaviours.get(path)?.(r, nth) ?? 200;
      if (action === 'drop') {
        req.socket.destroy();
        return;
      }
      res.writeHead(action, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    at: (path) => requests.filter((r) => r.path === path),
    on: (path, behaviour) => behaviours.set(path, behaviour),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// Fake management-api

export interface AppConfig {
  organizationId: string;
  sharedSecret: string;
  webhooks: ResolvedWebhook[];
  /** Channel id -> channel webhooks of the config governing it ('*' for any other channel). */
  channels?: Record<string, { channelConfigId: string; webhooks: ResolvedWebhook[] }>;
}

export interface FakeManagement {
  apps: Map<string, AppConfig>;
  /** Requests answered, per application id. */
  calls: Map<string, number>;
  /** Publishes management-api.v1.applications.changed like management-api does. */
  changed(applicationId: string): void;
  close(): void;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

export function fakeManagement(nc: NatsConnection, ns: string): FakeManagement {
  const apps = new Map<string, AppConfig>();
  const calls = new Map<string, number>();
  const sub: Subscription = nc.subscribe(`${ns}.management-api.v1.webhooks.resolve`, {
    queue: 'management-api',
    callback: (_err, msg) => {
      const packet = JSON.parse(dec.decode(msg.data)) as {
        id: string;
        data: { applicationId: string; channelId: string | null };
      };
      const { applicationId, channelId } = packet.data;
      calls.set(applicationId, (calls.get(applicationId) ?? 0) + 1);
      const app = apps.get(applicationId);
      if (!app) {
        msg.respond(
          enc.encode(
            JSON.stringify({
              id: packet.id,
              err: { code: 'NotFound', message: `No application ${applicationId}.` },
              isDisposed: true,
            }),
          ),
        );
        return;
      }
      const channel = channelId === null ? undefined : (app.channels?.[channelId] ?? app.channels?.['*']);
      const response: WebhooksResolveResponse = {
        organizationId: app.organizationId,
        sharedSecret: app.sharedSecret,
        channelConfigId: channel?.channelConfigId ?? null,
        webhooks: [...app.webhooks, ...(channel?.webhooks ?? [])],
      };
      msg.respond(enc.encode(JSON.stringify({ id: packet.id, response, isDisposed: true })));
    },
  });
  return {
    apps,
    calls,
    changed(applicationId) {
      nc.publish(
        `${ns}.${RuntimeSubjects.applicationChanged}`,
        JSON.stringify({ pattern: RuntimeSubjects.applicationChanged, data: { applicationId } }),
      );
    },
    close: () => sub.unsubscribe(),
  };
}

export function webhook(id: string, url: string, options: Partial<ResolvedWebhook> = {}): ResolvedWebhook {
  return { id, source: 'application', url, events: null, batch: false, reliable: false, disabled: false, ...options };
}

// ---------------------------------------------------------------------------------------------
// Events

let counter = 0;

/** An EventInfo as the runtime writes it: the parts the event is not about are null. */
export function eventInfo(
  type: WebhookEventName,
  applicationId: string,
  options: { channelId?: string | null; timestamp?: number; id?: string } = {},
): EventInfo {
  const channelId = options.channelId === undefined ? 'room-1' : options.channelId;
  const clientPart = {
    id: `client-${++counter}`,
    userId: 'user-1',
    userAlias: 'Ada',
    deviceId: 'device-1',
    deviceAlias: null,
    tag: null,
    roles: ['speaker'],
    applicationId,
    stats: null,
  };
  return {
    id: options.id ?? randomUUID(),
    timestamp: options.timestamp ?? Date.now(),
    origin: 'client',
    type,
    forced: false,
    channel: channelId === null ? null : { id: channelId, applicationId, channelRecording: null },
    client: type.startsWith('client.') || type.startsWith('channel.client.') ? clientPart : null,
    connection: null,
    message: null,
  };
}

export interface EventBus {
  js: JetStreamClient;
  /** Resolves with the stream sequence JetStream gave the event (its place in the stream order). */
  publish(applicationId: string, organizationId: string, event: EventInfo, msgId?: string): Promise<number>;
  /**
   * Publishes many events without waiting for each PubAck in turn (a window of outstanding
   * publishes); resolves with the stream sequence of each, by event id.
   */
  publishMany(
    items: Array<{ applicationId: string; organizationId: string; event: EventInfo }>,
    window?: number,
  ): Promise<Map<string, number>>;
}

/** Creates the event stream as runtime-registry will (the worker would create the same if missing). */
export async function eventBus(nc: NatsConnection, ns: string): Promise<EventBus> {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({
    name: eventStreamName(ns),
    subjects: [eventSubject(ns, '>')],
    max_age: nanos(3600_000),
    duplicate_window: nanos(120_000),
  });
  const js = jetstream(nc);
  const publish = async (applicationId: string, organizationId: string, event: EventInfo, msgId = event.id) => {
    const domain: DomainEvent = { event, applicationId, organizationId };
    const h = natsHeaders();
    h.set('Nats-Msg-Id', msgId);
    return (await js.publish(eventSubject(ns, event.type), JSON.stringify(domain), { headers: h })).seq;
  };
  return {
    js,
    publish,
    async publishMany(items, window = 256) {
      let next = 0;
      const seqs = new Map<string, number>();
      const lanes = Array.from({ length: Math.min(window, items.length) }, async () => {
        while (next < items.length) {
          const item = items[next++]!;
          seqs.set(item.event.id, await publish(item.applicationId, item.organizationId, item.event));
        }
      });
      await Promise.all(lanes);
      return seqs;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The worker and its database

export interface WorkerEnv {
  [key: string]: string;
}

export async function startWorker(env: WorkerEnv): Promise<SpawnedService> {
  return spawnService('webhook-worker', { ...env, HTTP_PORT: String(await freePort()) }, { readyTimeoutMs: 30000 });
}

export async function sql<T = Record<string, unknown>>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** A request over NATS in the packet format of the project (Nest's), answering the reply packet. */
export async function natsCall<T>(
  nc: NatsConnection,
  ns: string,
  subject: string,
  data: unknown,
): Promise<{
  response?: T;
  err?: { code: string; message: string; details?: Array<{ field?: string; message: string }> };
}> {
  const msg = await nc.request(`${ns}.${subject}`, JSON.stringify({ pattern: subject, data, id: randomUUID() }), {
    timeout: 5000,
  });
  return JSON.parse(dec.decode(msg.data)) as { response?: T; err?: { code: string; message: string } };
}

/** Prometheus text of the worker. */
export async function metricsOf(worker: SpawnedService): Promise<string> {
  const res = await fetch(`${worker.url}/metrics`);
  return res.text();
}

export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const matchesAll = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (matchesAll) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}
