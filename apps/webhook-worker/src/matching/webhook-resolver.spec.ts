import { DomainError, type WebhooksResolveResponse } from '@switchboard/contracts';
import { Metrics, type NatsClient } from '@switchboard/service-kit';
import { loadWebhookWorkerConfig } from '../config.js';
import { WebhookMetrics } from '../metrics/webhook-metrics.js';
import { WebhookResolver } from './webhook-resolver.js';

describe('WebhookResolver', () => {
  const answer = (secret: string): WebhooksResolveResponse => ({
    organizationId: 'org-1',
    sharedSecret: secret,
    channelConfigId: null,
    webhooks: [],
  });
  let calls: Array<{ applicationId: string; channelId: string | null }> = [];
  let reply: (req: { applicationId: string; channelId: string | null }) => Promise<WebhooksResolveResponse>;
  const nats = {
    request: (_subject: string, payload: { applicationId: string; channelId: string | null }) => {
      calls.push(payload);
      return reply(payload);
    },
  } as unknown as NatsClient;
  let metrics: WebhookMetrics;
  const make = (cacheMs: number, staleMs = 0) => {
    metrics = new WebhookMetrics(new Metrics('test'));
    const env = {
      NATS_URL: 'nats://x:1',
      REDIS_URL: 'redis://x',
      DATABASE_URL: 'postgres://x/y',
      WEBHOOK_CONFIG_CACHE_MS: String(cacheMs),
      WEBHOOK_CONFIG_STALE_MS: String(staleMs),
    };
    return new WebhookResolver(nats, loadWebhookWorkerConfig(env), metrics);
  };
  const down = async (): Promise<WebhooksResolveResponse> => {
    throw new Error('no responders');
  };
  const counted = async () => (await metrics.configStale.get()).values[0]?.value ?? 0;
  const standingIn = async () => (await metrics.configStaleKeys.get()).values[0]?.value ?? 0;

  beforeEach(() => {
    calls = [];
    reply = async () => answer('s1');
  });

  it('asks once per (application, channel) within the cache time, concurrent lookups included', async () => {
    const r = make(2000);
    await Promise.all([r.resolve('a', 'c1'), r.resolve('a', 'c1'), r.resolve('a', 'c2'), r.resolve('a', null)]);
    await r.resolve('a', 'c1');
    expect(calls).toEqual([
      { applicationId: 'a', channelId: 'c1' },
      { applicationId: 'a', channelId: 'c2' },
      { applicationId: 'a', channelId: null },
    ]);
  });

  it('asks again after the cache time, and always with a cache time of 0', async () => {
    const r = make(30);
    await r.resolve('a', null);
    await new Promise((res) => setTimeout(res, 50));
    await r.resolve('a', null);
    expect(calls).toHaveLength(2);
    const none = make(0);
    await none.resolve('b', null);
    await none.resolve('b', null);
    expect(calls).toHaveLength(4);
  });

  it('drops every entry of an application on a change, and does not cache an answer older than the change', async () => {
    const r = make(5000);
    await r.resolve('a', 'c1');
    await r.resolve('other', null);
    r.invalidate('a');
    reply = async () => answer('s2');
    expect((await r.resolve('a', 'c1'))?.sharedSecret).toBe('s2');
    await r.resolve('other', null);
    expect(calls.map((c) => c.applicationId)).toEqual(['a', 'other', 'a']);

    let release!: () => void;
    reply = () => new Promise((res) => (release = () => res(answer('stale'))));
    const inFlight = r.resolve('x', null);
    r.invalidate('x');
    release();
    expect((await inFlight)?.sharedSecret).toBe('stale');
    reply = async () => answer('fresh');
    expect((await r.resolve('x', null))?.sharedSecret).toBe('fresh');
  });

  it('an answer off the contract is a failure naming the field, and is not cached', async () => {
    const r = make(5000);
    reply = async () =>
      ({ ...answer('s'), webhooks: [{ id: 'w', source: 'organization' }] }) as unknown as WebhooksResolveResponse;
    await expect(r.resolve('bad', null)).rejects.toThrow(/webhooks\[0\]/);
    reply = async () => answer('good');
    expect((await r.resolve('bad', null))?.sharedSecret).toBe('good');
  });

  it('an unknown application is an answer (null, cached); other failures are thrown and not cached', async () => {
    const r = make(5000);
    reply = async () => {
      throw new DomainError('NotFound', 'no such application');
    };
    expect(await r.resolve('gone', null)).toBeNull();
    expect(await r.resolve('gone', null)).toBeNull();
    expect(calls).toHaveLength(1);
    reply = async () => {
      throw new DomainError('Unavailable', 'nobody answers');
    };
    await expect(r.resolve('down', null)).rejects.toThrow('nobody answers');
    reply = async () => answer('up');
    expect((await r.resolve('down', null))?.sharedSecret).toBe('up');
  });

  it('while management-api cannot answer, the last configuration read answers for WEBHOOK_CONFIG_STALE_MS, counted', async () => {
    const r = make(0, 200);
    expect((await r.resolve('a', 'c1'))?.sharedSecret).toBe('s1');
    reply = down;
    expect((await r.resolve('a', 'c1'))?.sharedSecret).toBe('s1');
    expect((await r.resolve('a', 'c1'))?.sharedSecret).toBe('s1');
    expect(await counted()).toBe(2);
    expect(await standingIn()).toBe(1);
    // Nothing kept for another key: its events wait.
    await expect(r.resolve('a', 'c2')).rejects.toThrow('no responders');
    // Back: the fresh answer replaces the kept one.
    reply = async () => answer('s2');
    expect((await r.resolve('a', 'c1'))?.sharedSecret).toBe('s2');
    expect(await standingIn()).toBe(0);
    // Over the bound, the failure shows again.
    reply = down;
    await new Promise((res) => setTimeout(res, 250));
    await expect(r.resolve('a', 'c1')).rejects.toThrow('no responders');
    expect(await counted()).toBe(2);
  });

  it('keeps nothing with WEBHOOK_CONFIG_STALE_MS=0, and a change notification drops the kept configuration', async () => {
    const off = make(0, 0);
    await off.resolve('a', null);
    reply = down;
    await expect(off.resolve('a', null)).rejects.toThrow('no responders');
    reply = async () => answer('s1');
    const r = make(0, 60_000);
    await r.resolve('a', null);
    reply = down;
    r.invalidate('a');
    await expect(r.resolve('a', null)).rejects.toThrow('no responders');
  });
});
