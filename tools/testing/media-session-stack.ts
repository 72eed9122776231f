/**
 * The whole control plane with a real Janus, for the media tests run in the media network namespace:
 * management-api, runtime-registry, admin-gateway (each spawned from dist/), a Janus and its
 * media-agent, and participants that register over the real `/sync` socket and signal their
 * werift PeerConnections through it, as a client SDK does.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  createTestDatabase,
  findApp,
  flushRedisPrefix,
  freePort,
  serviceTestEnv,
  spawnService,
  testNamespace,
  testServers,
  waitFor,
  type SpawnedService,
  type TestDatabase,
} from '@switchboard/testing';
import { SyncClient } from '../simulator/src/index.mjs';
import { startMediaStack, type MediaStack } from './media-stack.js';
import { TestPublisher, TestSubscriber, type Candidate, type SessionDescription } from './webrtc-client.js';

const run = promisify(execFile);

export interface Push {
  type: string;
  connectionId?: string;
  [field: string]: unknown;
}

export interface StackOptions {
  registryEnv?: Record<string, string>;
  gatewayEnv?: Record<string, string>;
  agentEnv?: Record<string, string>;
}

export class MediaSessionStack {
  readonly namespace = testNamespace('sessions');
  readonly applicationId = `app-${this.namespace}`;
  db!: TestDatabase;
  media!: MediaStack;
  management!: SpawnedService;
  registry!: SpawnedService;
  gateway!: SpawnedService;
  operatorKey!: string;
  private configId!: string;
  private readonly participants: MediaParticipant[] = [];

  constructor(private readonly options: StackOptions = {}) {}

  async start(): Promise<this> {
    this.db = await createTestDatabase(this.namespace);
    const env = serviceTestEnv(this.namespace, this.db.url);
    const boot = await run(process.execPath, [findApp('management-api').bootstrap!], {
      env: { ...process.env, ...env },
    });
    this.operatorKey = (JSON.parse(boot.stdout) as { apiKey: string }).apiKey;
    const port = async () => String(await freePort());
    [this.management, this.registry, this.gateway, this.media] = await Promise.all([
      spawnService('management-api', { ...env, HTTP_PORT: await port() }),
      spawnService('runtime-registry', { ...env, HTTP_PORT: await port(), ...this.options.registryEnv }),
      spawnService('admin-gateway', { ...env, HTTP_PORT: await port(), ...this.options.gatewayEnv }),
      startMediaStack({ NATS_NAMESPACE: this.namespace, ...this.options.agentEnv }),
    ]);
    const created = await this.b<{ id: string }>('POST', '/ApplicationConfigs', {
      applicationId: this.applicationId,
      tag: 'media',
    });
    this.configId = created.id;
    // Placement needs the agent's server heard by the registry.
    await waitFor(async () => (await this.mediaServer())?.active === true, {
      timeoutMs: 15000,
      description: 'the media server listed active',
    });
    return this;
  }

  /** The media server of the agent as interface A lists it. */
  async mediaServer(): Promise<{ id: string; active: boolean; [field: string]: unknown } | undefined> {
    const servers = await this.a<Array<{ id: string; active: boolean }>>('GET', '/mediaservers');
    return servers.find((server) => server.id === this.media.mediaServerId);
  }

  /** An interface A call. */
  a<T>(method: string, path: string, body?: unknown): Promise<T> {
    return call<T>(method, `${this.gateway.url!}/admin/api/v1.0${path}`, this.operatorKey, body);
  }

  /** An interface B call with the operator key. */
  b<T>(method: string, path: string, body?: unknown): Promise<T> {
    return call<T>(method, `${this.management.url!}${path}`, this.operatorKey, body);
  }

  /** A register token of the management API's Token action for the user's client, claiming `channelId`. */
  async token(userId: string, channelId: string, clientId = `${userId}-client`): Promise<string> {
    const token = await this.b<{ value: string }>('POST', `/ApplicationConfigs/${this.configId}/Token`, {
      userId,
      deviceId: `${userId}-device`,
      clientId,
      channelClaims: [{ id: channelId }],
    });
    return token.value;
  }

  /** A participant registered over `/sync` and joined to `channelId`. */
  async participant(userId: string, channelId: string, clientId = `${userId}-client`): Promise<MediaParticipant> {
    const token = await this.token(userId, channelId, clientId);
    const sync = await SyncClient.connect(`${this.gateway.url!.replace('http', 'ws')}/sync`, {
      requestTimeoutMs: 30000,
    });
    const participant = new MediaParticipant(sync, channelId, { userId, deviceId: `${userId}-device`, clientId });
    this.participants.push(participant);
    participant.registered = await sync.request('register', { token });
    participant.joined = await sync.request('join', { channelId });
    return participant;
  }

  async stop(): Promise<void> {
    await Promise.all(this.participants.map((participant) => participant.close()));
    await Promise.all([this.management, this.registry, this.gateway].map((service) => service?.stop()));
    await this.media?.stop();
    await flushRedisPrefix(testServers().redisUrl, `${this.namespace}:`);
    await this.db?.drop();
  }
}

/** One client: its `/sync` socket, the pushes it got, and its publishing and receiving connections. */
export class MediaParticipant {
  readonly pushes: Push[] = [];
  registered: Record<string, unknown> = {};
  joined: Record<string, unknown> = {};
  readonly publishers = new Map<string, TestPublisher>();
  readonly subscribers = new Map<string, TestSubscriber>();

  constructor(
    readonly sync: InstanceType<typeof SyncClient>,
    readonly channelId: string,
    readonly ids: { userId: string; deviceId: string; clientId: string },
  ) {
    sync.onPush((push: Push) => {
      this.pushes.push(push);
      // A renegotiation of the media server (a subscriber whose publisher changed) is answered at once.
      if (push.type === 'connection.offer') void this.answerRenegotiation(push);
    });
  }

  request<T = Record<string, unknown>>(type: string, data?: unknown): Promise<T> {
    return this.sync.request(type, data) as Promise<T>;
  }

  pushesOf(type: string, connectionId?: string): Push[] {
    return this.pushes.filter(
      (p) => p.type === type && (connectionId === undefined || p.connectionId === connectionId),
    );
  }

  /** Opens an upstream sfu connection, publishes through `/sync` (trickling its candidates) and sends RTP. */
  async publish(connectionId: string, media: Parameters<TestPublisher['start']>[0] = {}): Promise<TestPublisher> {
    await this.request('connection.open', {
      channelId: this.channelId,
      connectionId,
      type: 'sfu',
      streams: {
        audio: { direction: 'sendonly', formats: ['opus/48000/2'] },
        video: { direction: 'sendonly', formats: ['VP8/90000'] },
        data: { direction: 'sendrecv' },
      },
    });
    await this.moveTo(connectionId, ['initializing', 'connecting']);
    const publisher = new TestPublisher();
    this.publishers.set(connectionId, publisher);
    const trickled: Array<Candidate | null> = [];
    const offer = await publisher.offer({ trickle: (candidate) => trickled.push(candidate) });
    const { answer } = await this.request<{ answer: SessionDescription }>('connection.offer', { connectionId, offer });
    await publisher.accept(answer);
    await waitFor(() => trickled.includes(null), { description: 'the end of gathering' });
    const candidates = trickled.filter((c): c is Candidate => c !== null);
    await this.request('connection.candidates', { connectionId, candidates, completed: true });
    publisher.start(media);
    return publisher;
  }

  /** Opens a downstream sfu connection receiving `remoteConnectionId`, answering the media server's offer. */
  async subscribe(connectionId: string, remoteConnectionId: string): Promise<TestSubscriber> {
    await this.request('connection.open', {
      channelId: this.channelId,
      connectionId,
      type: 'sfu',
      remoteConnectionId,
      streams: { audio: { direction: 'recvonly' }, video: { direction: 'recvonly' }, data: { direction: 'sendrecv' } },
    });
    await this.moveTo(connectionId, ['initializing', 'connecting']);
    const subscriber = new TestSubscriber();
    this.subscribers.set(connectionId, subscriber);
    const { offer } = await this.request<{ offer: SessionDescription }>('connection.subscribe', { connectionId });
    const answer = await subscriber.answer(offer);
    await this.request('connection.answer', { connectionId, answer });
    return subscriber;
  }

  private async moveTo(connectionId: string, states: string[]): Promise<void> {
    for (const state of states) await this.request('connection.state', { connectionId, state });
  }

  private async answerRenegotiation(push: Push): Promise<void> {
    const subscriber = this.subscribers.get(push.connectionId!);
    if (!subscriber) return;
    const answer = await subscriber.answer(push.offer as SessionDescription);
    await this.request('connection.answer', { connectionId: push.connectionId, answer }).catch(() => undefined);
  }

  async close(): Promise<void> {
    for (const peer of [...this.publishers.values(), ...this.subscribers.values()])
      await peer.close().catch(() => undefined);
    await this.sync.terminate().catch(() => undefined);
  }
}

async function call<T>(method: string, url: string, key: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { 'x-api-key': key };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}
