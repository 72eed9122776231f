/**
 * Events end to end: live clients over /sync produce domain events in runtime-registry; the
 * webhook-worker delivers them to application and channel webhooks on a loopback receiver (signed,
 * filtered by event name, disabled ones skipped) and logs every attempt; the usage-aggregator turns
 * the same stream into usage records served by the management API.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
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
import { SyncClient } from '../../tools/simulator/src/index.mjs';
import { call } from './http.js';

const run = promisify(execFile);

interface Delivery {
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: { type?: string; batch?: Array<{ type: string }> };
}

describe('events to webhooks and usage', () => {
  const servers = testServers();
  const ns = testNamespace('events_e2e');
  const applicationId = `app-${ns}`;
  let db: TestDatabase;
  const processes: SpawnedService[] = [];
  let management: SpawnedService;
  let gateway: SpawnedService;
  let key: string;
  let configId: string;
  let sharedSecret: string;
  let receiver: http.Server;
  let receiverUrl: string;
  const deliveries: Delivery[] = [];
  const startedAt = Date.now();

  const h = () => ({ 'X-API-Key': key });
  const at = (path: string) => deliveries.filter((d) => d.path === path);
  const types = (path: string) =>
    at(path).flatMap((d) => (d.body.batch ? d.body.batch.map((e) => e.type) : [d.body.type!]));

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
      req.on('end', () => {
        deliveries.push({ path: req.url ?? '', headers: req.headers, raw, body: JSON.parse(raw) as Delivery['body'] });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

    db = await createTestDatabase('events_e2e');
    // The receiver is on loopback: management-api accepts the webhooks' URLs, webhook-worker delivers to them.
    const env = { ...serviceTestEnv(ns, db.url), WEBHOOK_ALLOW_LOOPBACK: 'true' };
    const boot = await run(process.execPath, [findApp('management-api').bootstrap!], {
      env: { ...process.env, ...env },
    });
    key = (JSON.parse(boot.stdout) as { apiKey: string }).apiKey;
    const started = await Promise.all([
      spawnService('management-api', { ...env, HTTP_PORT: String(await freePort()) }),
      spawnService('runtime-registry', { ...env, HTTP_PORT: String(await freePort()) }),
      spawnService('admin-gateway', { ...env, HTTP_PORT: String(await freePort()) }),
      spawnService('webhook-worker', { ...env, HTTP_PORT: String(await freePort()) }),
      spawnService('usage-aggregator', { ...env, HTTP_PORT: String(await freePort()) }),
    ]);
    processes.push(...started);
    management = started[0]!;
    gateway = started[2]!;

    const config = await call<{ id: string; sharedSecret: string }>('POST', `${management.url}/ApplicationConfigs`, {
      headers: h(),
      body: { applicationId },
    });
    assert.equal(config.status, 201);
    ({ id: configId, sharedSecret } = config.body);
    const webhook = (path: string, events: string[], disabled = false) => ({
      applicationConfigId: configId,
      name: path,
      url: `${receiverUrl}${path}`,
      events,
      disabled,
      batch: false,
      reliable: true,
    });
    assert.equal(
      (
        await call('POST', `${management.url}/ApplicationWebhooks`, {
          headers: h(),
          body: webhook('/app', ['client.registered', 'channel.client.joined', 'connection.connected']),
        })
      ).status,
      201,
    );
    assert.equal(
      (
        await call('POST', `${management.url}/ApplicationWebhooks`, {
          headers: h(),
          body: webhook('/disabled', [], true),
        })
      ).status,
      201,
    );
    const channelConfig = await call<{ id: string }>('POST', `${management.url}/ChannelConfigs`, {
      headers: h(),
      body: { applicationConfigId: configId, channelIdPattern: 'lobby', priority: 1, default: false },
    });
    assert.equal(channelConfig.status, 201);
    const { applicationConfigId: _ignored, ...channelHook } = webhook('/channel', ['channel.activated']);
    assert.equal(
      (
        await call('POST', `${management.url}/ChannelWebhooks`, {
          headers: h(),
          body: { ...channelHook, channelConfigId: channelConfig.body.id },
        })
      ).status,
      201,
    );
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await new Promise((r) => receiver?.close(r));
    await flushRedisPrefix(servers.redisUrl, `${ns}:`);
    await db?.drop();
  });

  it('a live session reaches exactly the webhooks that subscribe to its events, signed, and is logged', async () => {
    const token = (
      await call<{ value: string }>('POST', `${management.url}/ApplicationConfigs/${configId}/Token`, {
        headers: h(),
        body: { userId: 'ann', deviceId: 'ann-pc', clientId: 'ann-1', channelClaims: [{ id: 'lobby' }] },
      })
    ).body.value;
    const sync = await SyncClient.connect(`${gateway.url!.replace('http', 'ws')}/sync`);
    await sync.request('register', { token });
    await sync.request('join', { channelId: 'lobby' });
    await sync.request('connection.open', {
      channelId: 'lobby',
      type: 'peer',
      connectionId: 'cn-ann',
      streams: { audio: { direction: 'sendrecv' }, video: { direction: 'sendrecv', maxPixelCount: 921600 } },
    });
    for (const state of ['initializing', 'connecting', 'connected'])
      await sync.request('connection.state', { connectionId: 'cn-ann', state });

    await waitFor(() => types('/app').length >= 3 && types('/channel').length >= 1, { timeoutMs: 20000 });
    expect(types('/app').sort()).toEqual(['channel.client.joined', 'client.registered', 'connection.connected']);
    expect(types('/channel')).toEqual(['channel.activated']);

    for (const d of [...at('/app'), ...at('/channel')]) {
      expect(d.headers['x-applicationsignature']).toBe(
        createHmac('sha256', Buffer.from(sharedSecret, 'utf8')).update(d.raw).digest('base64'),
      );
      const verifier = new Webhook(`whsec_${Buffer.from(sharedSecret, 'utf8').toString('base64')}`);
      expect(() =>
        verifier.verify(d.raw, {
          'webhook-id': String(d.headers['webhook-id']),
          'webhook-timestamp': String(d.headers['webhook-timestamp']),
          'webhook-signature': String(d.headers['webhook-signature']),
        }),
      ).not.toThrow();
    }
    const joined = at('/app').find((d) => d.body.type === 'channel.client.joined')!.body as Record<string, any>;
    expect(joined).toEqual(
      expect.objectContaining({
        id: expect.any(String),
        timestamp: expect.any(Number),
        channel: expect.objectContaining({ id: 'lobby' }),
        client: expect.objectContaining({ id: 'ann-1', userId: 'ann' }),
      }),
    );

    await sync.request('connection.close', { connectionId: 'cn-ann' });
    await sync.request('unregister').catch(() => undefined);

    const log = await waitFor(
      async () => {
        const answer = await call<{ value: Array<{ eventType: string }> }>(
          'GET',
          `${management.url}/WebhookDeliveries`,
          { headers: h() },
        );
        return answer.status === 200 && answer.body.value.length >= 4 ? answer.body.value : undefined;
      },
      { timeoutMs: 20000 },
    );
    expect(log.map((d) => d.eventType)).toEqual(
      expect.arrayContaining([
        'client.registered',
        'channel.client.joined',
        'connection.connected',
        'channel.activated',
      ]),
    );
    // The disabled webhook got nothing, though the events it would match were delivered elsewhere.
    expect(at('/disabled')).toEqual([]);
  });

  it('the same events become usage records served by the management API', async () => {
    const records = await waitFor(
      async () => {
        const answer = await call<{
          value: Array<{
            applicationId: string;
            participantMinutes: Array<{ key: number; value: { usageParticipantMinutes: number } }>;
          }>;
        }>(
          'GET',
          `${management.url}/Usage?applicationId=${applicationId}&startTimestamp=${startedAt - 3600000}&endTimestamp=${Date.now() + 3600000}`,
          { headers: h() },
        );
        const minutes = answer.body?.value?.flatMap((r) => r.participantMinutes) ?? [];
        return minutes.some((m) => m.value.usageParticipantMinutes > 0) ? answer.body.value : undefined;
      },
      { timeoutMs: 20000 },
    );
    expect(records.every((r) => r.applicationId === applicationId)).toBe(true);
  });
});
