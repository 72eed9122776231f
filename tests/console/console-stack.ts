/**
 * A real stack for the console's browser tests: management-api, runtime-registry, admin-gateway
 * and the console, each its own process, live clients over the real /sync socket.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  createTestDatabase,
  findApp,
  flushRedisPrefix,
  freePort,
  serviceTestEnv,
  spawnService,
  testServers,
  waitFor,
  type SpawnedService,
  type TestDatabase,
} from '@switchboard/testing';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { FakeMediaServer, SyncClient } from '../../tools/simulator/src/index.mjs';
import type { TestOAuthIssuer } from '../../tools/testing/oauth-issuer.js';
import { writeConnectionMedia, type MediaTarget } from '../../tools/media/media.mjs';

const run = promisify(execFile);
const CONSOLE_MAIN = path.resolve('apps/console/dist/main.js');

export interface Push {
  type: string;
  [field: string]: unknown;
}
export interface LiveClient {
  sync: InstanceType<typeof SyncClient>;
  pushes: Push[];
}

/** A webhook receiver on loopback that refuses (500) while `failing`, and records what reaches it. */
export class WebhookReceiver {
  failing = true;
  readonly received: Array<{ webhookId: string; status: number }> = [];
  private readonly server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const status = this.failing ? 500 : 200;
      this.received.push({ webhookId: String(request.headers['webhook-id'] ?? ''), status });
      response.writeHead(status).end();
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export class ConsoleStack {
  db!: TestDatabase;
  management!: SpawnedService;
  gateway!: SpawnedService;
  consoleUrl!: string;
  operatorKey!: string;
  operatorOrganizationId!: string;
  configId!: string;
  private readonly services: SpawnedService[] = [];
  private consoleProcess?: ChildProcess;
  private readonly clients: LiveClient[] = [];
  readonly receiver = new WebhookReceiver();
  mediaServer!: InstanceType<typeof FakeMediaServer>;
  private nats?: NatsConnection;
  private env: Record<string, string> = {};

  recordings?: SpawnedService;

  /**
   * `extras`: recording-service (recordings played through the console) and usage-aggregator too; an
   * OAuth2 issuer whose tokens the APIs accept and the console signs in with.
   */
  constructor(
    readonly namespace: string,
    readonly applicationId: string,
    private readonly extras: { recordings?: boolean; usage?: boolean; oauth?: TestOAuthIssuer } = {},
  ) {}

  private async extraServices(env: Record<string, string>, ports: Record<string, string>): Promise<SpawnedService[]> {
    const dir = path.join(testServers().dataDir, this.namespace);
    return Promise.all([
      ...(this.extras.recordings
        ? [
            spawnService('recording-service', {
              ...env,
              HTTP_PORT: ports.recordings!,
              RECORDINGS_URL_SECRET: 'console-recordings-url-secret-0123456789abcdef',
              RECORDINGS_DIR: path.join(dir, 'work'),
              RECORDINGS_STORAGE_DIR: path.join(dir, 'storage'),
            }),
          ]
        : []),
      ...(this.extras.usage ? [spawnService('usage-aggregator', { ...env, HTTP_PORT: ports.usage! })] : []),
    ]);
  }

  /**
   * Every process starts at once (ports chosen first), except management-api, which waits for the
   * bootstrap's migrations: a cold start of the stack is the slowest part of the console suite.
   */
  async start(): Promise<void> {
    this.db = await createTestDatabase(this.namespace);
    const issuer = this.extras.oauth;
    const env = {
      ...serviceTestEnv(this.namespace, this.db.url),
      ...(issuer
        ? { OAUTH_ISSUER: issuer.url, OAUTH_AUDIENCE: issuer.options.audience, OAUTH_JWKS_URL: issuer.jwksUrl }
        : {}),
    };
    this.env = env;
    const ports: Record<string, string> = {};
    for (const name of ['management', 'registry', 'gateway', 'worker', 'console', 'recordings', 'usage'])
      ports[name] = String(await freePort());
    const local = (name: string) => `http://127.0.0.1:${ports[name]}`;
    const management = run(process.execPath, [findApp('management-api').bootstrap!], {
      env: { ...process.env, ...env },
    }).then(async (boot) => {
      const booted = JSON.parse(boot.stdout) as { apiKey: string; organizationId: string };
      this.operatorKey = booted.apiKey;
      this.operatorOrganizationId = booted.organizationId;
      return spawnService('management-api', { ...env, HTTP_PORT: ports.management!, WEBHOOK_ALLOW_LOOPBACK: 'true' });
    });
    const [main, extras] = await Promise.all([
      Promise.all([
        management,
        spawnService('runtime-registry', { ...env, HTTP_PORT: ports.registry! }),
        spawnService('admin-gateway', { ...env, HTTP_PORT: ports.gateway! }),
        spawnService('webhook-worker', {
          ...env,
          HTTP_PORT: ports.worker!,
          WEBHOOK_ALLOW_LOOPBACK: 'true',
          WEBHOOK_BATCH_WINDOW_MS: '20',
          WEBHOOK_TIMEOUT_MS: '2000',
        }),
      ]),
      this.extraServices(env, ports),
      this.startConsole(ports.console!, {
        gateway: local('gateway'),
        management: local('management'),
        recordings: this.extras.recordings ? local('recordings') : undefined,
      }),
    ]);
    this.services.push(...main, ...extras);
    [this.management, , this.gateway] = main;
    if (this.extras.recordings) this.recordings = extras[0];
    this.nats = await connect({ servers: testServers().natsUrl });
    this.mediaServer = new FakeMediaServer({ nc: this.nats, namespace: this.namespace, index: 7, region: '<i>eu</i>' });
    this.mediaServer.start();
    const created = await this.b<{ id: string }>('POST', '/ApplicationConfigs', this.operatorKey, {
      applicationId: this.applicationId,
      tag: 'console',
    });
    this.configId = created.id;
    // Not reliable: the first failed attempt is the delivery's last, so it can be replayed at once.
    await this.b('POST', '/ApplicationWebhooks', this.operatorKey, {
      applicationConfigId: this.configId,
      name: 'console receiver',
      url: await this.receiver.start(),
      reliable: false,
    });
  }

  private async startConsole(
    consolePort: string,
    upstream: { gateway: string; management: string; recordings: string | undefined },
  ): Promise<void> {
    if (!existsSync(CONSOLE_MAIN)) throw new Error(`${CONSOLE_MAIN} does not exist: run npm run build first.`);
    this.consoleUrl = `http://127.0.0.1:${consolePort}`;
    const child = spawn(process.execPath, [CONSOLE_MAIN], {
      env: {
        ...process.env,
        HTTP_PORT: consolePort,
        LOG_LEVEL: 'warn',
        CONSOLE_GATEWAY_URL: upstream.gateway,
        CONSOLE_MANAGEMENT_URL: upstream.management,
        NATS_URL: this.env.NATS_URL,
        NATS_NAMESPACE: this.env.NATS_NAMESPACE,
        ...(upstream.recordings ? { CONSOLE_RECORDINGS_URL: upstream.recordings } : {}),
        ...(this.extras.oauth
          ? { CONSOLE_OAUTH_ISSUER: this.extras.oauth.url, CONSOLE_OAUTH_CLIENT_ID: this.extras.oauth.options.clientId }
          : {}),
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    this.consoleProcess = child;
    await waitFor(async () => (await fetch(`${this.consoleUrl}/healthz`).catch(() => undefined))?.ok === true, {
      timeoutMs: 15000,
    });
  }

  /** An interface A call straight to the gateway (the truth the console is checked against). */
  async a<T>(method: string, pathAndQuery: string, body?: unknown): Promise<T> {
    return this.call<T>(method, `${this.gateway.url!}/admin/api/v1.0${pathAndQuery}`, this.operatorKey, body);
  }

  async b<T>(method: string, pathAndQuery: string, key: string, body?: unknown): Promise<T> {
    return this.call<T>(method, `${this.management.url!}${pathAndQuery}`, key, body);
  }

  private async call<T>(method: string, url: string, key: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { 'x-api-key': key };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** A live client that registered, joined `channelId` and opened a connected peer connection. */
  async connectClient(userId: string, deviceId: string, clientId: string, channelId: string): Promise<LiveClient> {
    const token = await this.b<{ value: string }>(
      'POST',
      `/ApplicationConfigs/${this.configId}/Token`,
      this.operatorKey,
      {
        userId,
        deviceId,
        clientId,
        clientRoles: ['participant'],
        channelClaims: [{ id: channelId }],
      },
    );
    const sync = await SyncClient.connect(`${this.gateway.url!.replace('http', 'ws')}/sync`);
    const client: LiveClient = { sync, pushes: [] };
    sync.onPush((push: Push) => client.pushes.push(push));
    this.clients.push(client);
    await sync.request('register', { token: token.value });
    await sync.request('join', { channelId });
    const opened = await sync.request('connection.open', {
      channelId,
      type: 'peer',
      connectionId: `cn-${clientId}`,
      streams: { audio: { direction: 'sendrecv' }, video: { direction: 'sendrecv', maxPixelCount: 921600 } },
    });
    for (const state of ['initializing', 'connecting', 'connected'])
      await sync.request('connection.state', { connectionId: opened.connectionId, state });
    return client;
  }

  /** A recording-service query over NATS, as the media server side asks it. */
  private async recordingQuery<T>(query: Record<string, unknown>): Promise<T> {
    const answer = await this.nats!.request(
      `${this.namespace}.recording-service.v1.query`,
      JSON.stringify({
        pattern: 'recording-service.v1.query',
        id: randomUUID(),
        data: { scope: { organizationId: null, operator: true, principal: 'media-server' }, query },
      }),
      { timeout: 10000 },
    );
    const reply = JSON.parse(new TextDecoder().decode(answer.data)) as { response?: T; err?: unknown };
    if (reply.err) throw new Error(JSON.stringify(reply.err));
    return reply.response as T;
  }

  /**
   * Records `connectionId` of `channelId` for about a second (interface A turns recording on and
   * off, the media server side writes the files) and waits for the muxed channel recording.
   */
  async record(channelId: string, connectionId: string): Promise<{ id: string; fileSize: number }> {
    const channel = `/applications/${this.applicationId}/channels/${encodeURIComponent(channelId)}`;
    await this.a('PATCH', channel, { recording: true, recordingTag: 'take <1>' });
    const query = { applicationId: this.applicationId, channelId, connectionId };
    const count = { kind: 'channel.recordings.count', applicationId: this.applicationId, channelId };
    await waitFor(async () => (await this.recordingQuery<number>(count)) === 1, {
      timeoutMs: 15000,
      description: 'the recording opened',
    });
    // About a second of recording: the muxed file spans the time recording was on.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await this.a('PATCH', channel, { recording: false });
    const target = await waitFor(
      async () => {
        const found = await this.recordingQuery<MediaTarget & { stopTimestamp: number | null }>({
          kind: 'media.recordingTarget',
          ...query,
        });
        return found.stopTimestamp ? found : undefined;
      },
      { timeoutMs: 15000, description: 'the recording closed' },
    );
    await writeConnectionMedia(target, { durationSeconds: 1 });
    return waitFor(
      async () => {
        const listed = await this.a<Array<{ id: string; ready: boolean; fileSize: number }>>(
          'GET',
          `${channel}/recordings`,
        );
        return listed[0]?.ready ? listed[0] : undefined;
      },
      { timeoutMs: 60000, description: 'the channel recording muxed' },
    );
  }

  async stop(): Promise<void> {
    for (const client of this.clients) await client.sync.terminate().catch(() => undefined);
    this.consoleProcess?.kill('SIGTERM');
    this.mediaServer?.stop();
    await this.nats?.close();
    await Promise.all(this.services.map((service) => service.stop()));
    await this.receiver.close();
    await flushRedisPrefix(testServers().redisUrl, `${this.namespace}:`);
    await this.db?.drop();
  }
}
