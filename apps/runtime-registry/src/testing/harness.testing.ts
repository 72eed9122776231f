/**
 * Test harness of runtime-registry integration tests: registry instances in this process against
 * the real NATS and Redis of the jest run, a NATS client speaking the Nest packet format exactly as
 * the gateway does, fake gateway replicas collecting pushes, media server heartbeats, and a reader
 * of the JetStream event stream.
 */
import { randomUUID } from 'node:crypto';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { INestApplication } from '@nestjs/common';
import {
  eventStreamName,
  pushSubject,
  RuntimeSubjects,
  type CallerScope,
  type ChannelClaim,
  type DomainEvent,
  type EdgeReport,
  type EdgeResults,
  type Heartbeat,
  type PushBatch,
  type RuntimeCommand,
  type RuntimeQueries,
  type RuntimeQueryKind,
  type ServerPush,
} from '@switchboard/contracts';
import { freePort, serviceTestEnv, testServers, waitFor } from '@switchboard/testing';
import { buildRuntimeRegistry } from '../app.js';
import { loadRegistryConfig, type RegistryConfig } from '../config.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class WireError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

/** Starts one registry instance in this process (HTTP on a free port, NATS server, background work). */
export async function startRegistry(
  env: Record<string, string>,
): Promise<{ app: INestApplication; config: RegistryConfig; url: string }> {
  const port = await freePort();
  const config = loadRegistryConfig({ LOG_LEVEL: 'warn', HTTP_PORT: String(port), ...env });
  const app = await buildRuntimeRegistry(config);
  await app.startAllMicroservices();
  await app.listen(port, '127.0.0.1');
  const url = `http://127.0.0.1:${port}`;
  // Ready = Redis and NATS reachable and the event stream ensured, as a deployment would wait for.
  await waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, {
    timeoutMs: 20000,
    description: 'the registry to be ready',
  });
  return { app, config, url };
}

export function registryEnv(ns: string, extra: Record<string, string> = {}): Record<string, string> {
  return { ...serviceTestEnv(ns), NATS_REQUEST_TIMEOUT_MS: '5000', ...extra };
}

/** Talks to the registry over NATS in the Nest packet format, as the gateway and management-api do. */
export class RegistryClient {
  constructor(
    readonly nc: NatsConnection,
    readonly ns: string,
  ) {}

  async raw(subject: string, data: unknown, timeout = 10000): Promise<unknown> {
    const msg = await this.nc.request(
      `${this.ns}.${subject}`,
      encoder.encode(JSON.stringify({ pattern: subject, data, id: randomUUID() })),
      { timeout },
    );
    const reply = JSON.parse(decoder.decode(msg.data)) as {
      response?: unknown;
      err?: { code: string; message: string } | null;
    };
    if (reply.err) throw new WireError(reply.err.code, reply.err.message);
    return reply.response ?? null;
  }

  query<K extends RuntimeQueryKind>(
    scope: CallerScope,
    kind: K,
    params: RuntimeQueries[K]['params'],
  ): Promise<RuntimeQueries[K]['result']> {
    return this.raw(RuntimeSubjects.query, { scope, query: { kind, ...params } }) as Promise<
      RuntimeQueries[K]['result']
    >;
  }

  command(scope: CallerScope, command: RuntimeCommand): Promise<null> {
    return this.raw(RuntimeSubjects.command, { scope, command }) as Promise<null>;
  }

  edge<K extends EdgeReport['kind']>(report: Extract<EdgeReport, { kind: K }>): Promise<EdgeResults[K]> {
    return this.raw(RuntimeSubjects.edge, { report }) as Promise<EdgeResults[K]>;
  }

  async heartbeat(hb: Heartbeat, nestPacket = true): Promise<void> {
    const subject = `${this.ns}.${RuntimeSubjects.heartbeat}`;
    this.nc.publish(
      subject,
      encoder.encode(JSON.stringify(nestPacket ? { pattern: RuntimeSubjects.heartbeat, data: hb } : hb)),
    );
    await this.nc.flush();
  }
}

export interface Received {
  gatewayId: string;
  clientId: string;
  userId: string;
  deviceId: string;
  applicationId: string;
  push: ServerPush;
}

/** A fake gateway replica: collects the pushes the registry sends to it. */
export class FakeGateway {
  readonly received: Received[] = [];
  private sub?: Subscription;

  constructor(
    readonly id: string,
    private readonly nc: NatsConnection,
    private readonly ns: string,
  ) {}

  async start(): Promise<this> {
    this.sub = this.nc.subscribe(pushSubject(this.ns, this.id), {
      callback: (err, msg) => {
        if (err) return;
        const batch = JSON.parse(decoder.decode(msg.data)) as PushBatch;
        for (const d of batch.deliveries) this.received.push({ gatewayId: this.id, ...d.client, push: d.push });
      },
    });
    await this.nc.flush();
    return this;
  }

  clear() {
    this.received.length = 0;
  }

  of(type: ServerPush['type']): Received[] {
    return this.received.filter((r) => r.push.type === type);
  }

  stop() {
    this.sub?.unsubscribe();
  }
}

/** Reads the domain events of the stream. */
export class EventReader {
  private constructor(
    private readonly jsm: JetStreamManager,
    readonly stream: string,
  ) {}

  static async open(nc: NatsConnection, ns: string): Promise<EventReader> {
    return new EventReader(await jetstreamManager(nc), eventStreamName(ns));
  }

  async all(): Promise<Array<{ seq: number; subject: string; msgId: string | undefined; event: DomainEvent }>> {
    const info = await this.jsm.streams.info(this.stream);
    const out: Array<{ seq: number; subject: string; msgId: string | undefined; event: DomainEvent }> = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const m = await this.jsm.streams.getMessage(this.stream, { seq }).catch(() => null);
      if (!m) continue;
      out.push({
        seq,
        subject: m.subject,
        msgId: m.header?.get('Nats-Msg-Id') || undefined,
        event: JSON.parse(decoder.decode(m.data)) as DomainEvent,
      });
    }
    return out;
  }

  get manager(): JetStreamManager {
    return this.jsm;
  }
}

export async function natsConnection(): Promise<NatsConnection> {
  return connect({ servers: testServers().natsUrl });
}

export const OPERATOR: CallerScope = { organizationId: null, operator: true, principal: 'operator' };
export const scopeOf = (organizationId: string): CallerScope => ({
  organizationId,
  operator: false,
  principal: `key-${organizationId}`,
});

export function claim(channelId: string, extra: Partial<ChannelClaim> = {}): ChannelClaim {
  return { id: channelId, ...extra };
}

/** A client identity for register reports. */
export interface TestClient {
  applicationId: string;
  userId: string;
  deviceId: string;
  clientId: string;
}

export function registerReport(
  c: TestClient,
  organizationId: string,
  gatewayId: string,
  extra: { userAlias?: string; deviceAlias?: string; tag?: string; roles?: string[] } = {},
) {
  return {
    kind: 'client.register' as const,
    client: {
      ...c,
      userAlias: extra.userAlias ?? `alias-${c.userId}`,
      deviceAlias: extra.deviceAlias ?? `dev-${c.deviceId}`,
      tag: extra.tag ?? null,
      roles: extra.roles ?? ['participant'],
      protocol: 'websocket',
    },
    organizationId,
    gatewayId,
    claims: [{ id: '*' }],
  };
}
