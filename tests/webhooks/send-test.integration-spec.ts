/**
 * Interface B `SendTest`, every piece real: management-api puts a `webhook.test` event on the
 * stream, webhook-worker delivers it, signed, to that one webhook only (not to the application's
 * other webhooks, and even when the webhook is disabled or does not want the type), and the
 * attempt shows in `/WebhookDeliveries` under the answered event id.
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
import { Webhook } from 'standardwebhooks';
import { call, expectODataError } from '../e2e/http.js';
import { startReceiver, startWorker, type Receiver } from './harness.js';

const run = promisify(execFile);

describe('SendTest: a test event to one webhook', () => {
  const ns = testNamespace('sendtest');
  let db: TestDatabase;
  let receiver: Receiver;
  const processes: SpawnedService[] = [];
  let management: SpawnedService;
  let key: string;
  let configId: string;
  let sharedSecret: string;

  const api = (method: string, path: string, body?: unknown) =>
    call(method, `${management.url}${path}`, {
      headers: { 'X-API-Key': key },
      ...(body === undefined ? {} : { body }),
    });

  beforeAll(async () => {
    db = await createTestDatabase('sendtest');
    receiver = await startReceiver();
    const env = { ...serviceTestEnv(ns, db.url), WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_CONFIG_CACHE_MS: '200' };
    const boot = await run(process.execPath, [findApp('management-api').bootstrap!], {
      env: { ...process.env, ...env },
    });
    key = (JSON.parse(boot.stdout) as { apiKey: string }).apiKey;
    processes.push(
      ...(await Promise.all([
        spawnService('management-api', { ...env, HTTP_PORT: String(await freePort()) }),
        startWorker(env),
      ])),
    );
    management = processes[0]!;
    const config = await api('POST', '/ApplicationConfigs', { applicationId: 'sendtest-app' });
    configId = config.body.id;
    sharedSecret = config.body.sharedSecret;
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await receiver?.close();
    await flushRedisPrefix(testServers().redisUrl, `${ns}:`);
    await db?.drop();
  });

  async function deliveriesOf(eventId: string) {
    const answer = await api('GET', `/WebhookDeliveries?$filter=eventId eq '${eventId}'`);
    expect(answer.status).toBe(200);
    return answer.body.value as Array<Record<string, unknown>>;
  }

  it('an application webhook (disabled, wanting other events) gets the signed test event; the others get nothing', async () => {
    const target = await api('POST', '/ApplicationWebhooks', {
      applicationConfigId: configId,
      url: `${receiver.url}/app-target`,
      disabled: true,
      events: ['channel.activated'],
    });
    expect(target.status).toBe(201);
    await api('POST', '/ApplicationWebhooks', { applicationConfigId: configId, url: `${receiver.url}/app-other` });

    const sent = await api('POST', `/ApplicationWebhooks/${target.body.id}/SendTest`);
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({ eventId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    await waitFor(() => receiver.at('/app-target').length === 1, { timeoutMs: 10000 });
    const request = receiver.at('/app-target')[0]!;
    expect(request.body).toMatchObject({ id: sent.body.eventId, type: 'webhook.test', origin: 'api' });
    new Webhook(Buffer.from(sharedSecret, 'utf8').toString('base64')).verify(request.raw, {
      'webhook-id': request.headers['webhook-id'] as string,
      'webhook-timestamp': request.headers['webhook-timestamp'] as string,
      'webhook-signature': request.headers['webhook-signature'] as string,
    });
    await waitFor(async () => (await deliveriesOf(sent.body.eventId)).length === 1, { timeoutMs: 5000 });
    expect((await deliveriesOf(sent.body.eventId))[0]).toMatchObject({
      webhookId: target.body.id,
      webhookSource: 'application',
      eventType: 'webhook.test',
      success: true,
      statusCode: 200,
    });
    expect(receiver.at('/app-other')).toEqual([]);
  });

  it('a channel webhook gets its test event; a failing receiver shows as a failed delivery', async () => {
    const channelConfig = await api('POST', '/ChannelConfigs', {
      applicationConfigId: configId,
      channelIdPattern: 'x',
    });
    expect(channelConfig.status).toBe(201);
    receiver.on('/channel-target', () => 500);
    const hook = await api('POST', '/ChannelWebhooks', {
      channelConfigId: channelConfig.body.id,
      url: `${receiver.url}/channel-target`,
    });
    const sent = await api('POST', `/ChannelWebhooks/${hook.body.id}/SendTest`);
    expect(sent.status).toBe(202);
    await waitFor(async () => (await deliveriesOf(sent.body.eventId)).length === 1, { timeoutMs: 10000 });
    expect((await deliveriesOf(sent.body.eventId))[0]).toMatchObject({
      webhookId: hook.body.id,
      webhookSource: 'channel',
      success: false,
      statusCode: 500,
      final: true,
    });
    expect(receiver.at('/channel-target')).toHaveLength(1);
  });

  it('answers 404 for a webhook of nobody and 409 for a webhook without URL', async () => {
    expectODataError(
      await api('POST', '/ApplicationWebhooks/00000000-0000-4000-8000-000000000000/SendTest'),
      404,
      'NotFound',
    );
    const noUrl = await api('POST', '/ApplicationWebhooks', { applicationConfigId: configId });
    expect(noUrl.status).toBe(201);
    expectODataError(await api('POST', `/ApplicationWebhooks/${noUrl.body.id}/SendTest`), 409, 'Conflict');
  });
});
