/**
 * Two registry instances behind one queue group, as two replicas in production: requests spread
 * over both, every change is one atomic script, so counts stay exact under 1,000 concurrent joins
 * and leaves; both create the event stream at start-up without stepping on each other.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { INestApplication } from '@nestjs/common';
import { eventStreamName } from '@switchboard/contracts';
import { Metrics } from '@switchboard/service-kit';
import { flushRedisPrefix, testNamespace, testServers } from '@switchboard/testing';
import {
  claim,
  natsConnection,
  OPERATOR,
  RegistryClient,
  registerReport,
  registryEnv,
  startRegistry,
  type TestClient,
} from './testing/harness.testing.js';

const ORG = 'org-r';
const a = 'app-replicas';
const CHANNELS = ['ch0', 'ch1', 'ch2', 'ch3', 'ch4'];

/** Client k: user u(k%50), device d(k%100) (always of the same user), gateway by parity. */
function clientOf(k: number): TestClient {
  return { applicationId: a, userId: `u${k % 50}`, deviceId: `d${k % 100}`, clientId: `c${k}` };
}

/** The reference model the registry's answers are checked against. */
class Model {
  registered = new Set<number>();
  members = new Map<string, Set<number>>(); // channel -> clients
  connections = new Map<string, number>(); // `${ch}/${k}` -> connections of k in ch

  join(k: number, ch: string) {
    if (!this.members.has(ch)) this.members.set(ch, new Set());
    this.members.get(ch)!.add(k);
  }
  leave(k: number, ch: string) {
    this.members.get(ch)?.delete(k);
    this.connections.delete(`${ch}/${k}`);
    if (this.members.get(ch)?.size === 0) this.members.delete(ch);
  }
  unregister(k: number) {
    this.registered.delete(k);
    for (const ch of Array.from(this.members.keys())) if (this.members.get(ch)!.has(k)) this.leave(k, ch);
  }
  channel(ch: string) {
    const ks = [...(this.members.get(ch) ?? [])];
    return {
      id: ch,
      userCount: new Set(ks.map((k) => clientOf(k).userId)).size,
      deviceCount: new Set(ks.map((k) => clientOf(k).deviceId)).size,
      clientCount: ks.length,
      connectionCount: ks.reduce((n, k) => n + (this.connections.get(`${ch}/${k}`) ?? 0), 0),
    };
  }
  application() {
    const ks = [...this.registered];
    return {
      id: a,
      channelCount: this.members.size,
      userCount: new Set(ks.map((k) => clientOf(k).userId)).size,
      deviceCount: new Set(ks.map((k) => clientOf(k).deviceId)).size,
      clientCount: ks.length,
      connectionCount: [...this.connections.values()].reduce((x, y) => x + y, 0),
    };
  }
}

describe('two registry replicas', () => {
  const ns = testNamespace('replicas');
  let instances: Array<{ app: INestApplication }>;
  let nc: NatsConnection;
  let rt: RegistryClient;
  const model = new Model();

  beforeAll(async () => {
    // Started together: both race to create the event stream.
    instances = await Promise.all([startRegistry(registryEnv(ns)), startRegistry(registryEnv(ns))]);
    nc = await natsConnection();
    rt = new RegistryClient(nc, ns);
  });

  afterAll(async () => {
    const jsm = nc ? await jetstreamManager(nc) : null;
    await jsm?.streams.delete(eventStreamName(ns)).catch(() => undefined);
    await nc?.close();
    await Promise.all((instances ?? []).map((i) => i.app.close()));
    await flushRedisPrefix(testServers().redisUrl, `${ns}:`);
  });

  it('both created the event stream with its limits', async () => {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(eventStreamName(ns));
    expect(info.config).toEqual(
      expect.objectContaining({
        name: `${ns}-events`,
        subjects: [`${ns}.events.>`],
        storage: 'file',
        retention: 'limits',
        duplicate_window: 120 * 1e9,
        max_age: 7 * 24 * 3600 * 1e9,
      }),
    );
  });

  it('a replica started with other stream limits brings the stream to them', async () => {
    const third = await startRegistry(
      registryEnv(ns, { EVENT_STREAM_MAX_AGE_SECONDS: '3600', EVENT_STREAM_DUPLICATE_WINDOW_SECONDS: '60' }),
    );
    try {
      const info = await (await jetstreamManager(nc)).streams.info(eventStreamName(ns));
      expect([info.config.max_age, info.config.duplicate_window, info.config.storage]).toEqual([
        3600 * 1e9,
        60 * 1e9,
        'file',
      ]);
    } finally {
      await third.app.close();
    }
  });

  it('keep exact counts under 1,000 concurrent joins and leaves spread over both', async () => {
    // 300 clients register concurrently.
    await Promise.all(
      Array.from({ length: 300 }, (_, k) => {
        model.registered.add(k);
        return rt.edge(registerReport(clientOf(k), ORG, k % 2 ? 'gw-odd' : 'gw-even'));
      }),
    );
    expect(await rt.query(OPERATOR, 'application.get', { applicationId: a })).toEqual(model.application());

    // 1,000 concurrent joins: clients 0..199 join every channel; half of them open a connection there.
    const joins: Array<Promise<unknown>> = [];
    for (let k = 0; k < 200; k++) {
      for (const ch of CHANNELS) {
        model.join(k, ch);
        const withConnection = (k + ch.length) % 2 === 0;
        if (withConnection) model.connections.set(`${ch}/${k}`, 1);
        joins.push(
          (async () => {
            await rt.edge({ kind: 'client.join', client: clientOf(k), channelId: ch, claim: claim(ch) });
            if (withConnection)
              await rt.edge({
                kind: 'connection.open',
                client: clientOf(k),
                channelId: ch,
                connectionId: `cn-${k}-${ch}`,
                type: 'peer',
                tag: null,
                streams: {},
              });
          })(),
        );
      }
    }
    expect(joins).toHaveLength(1000);
    await Promise.all(joins);
    await expectCounts();

    // 1,000 concurrent changes: 500 leaves of existing memberships and 500 joins of new ones.
    const mixed: Array<Promise<unknown>> = [];
    for (let k = 0; k < 100; k++) {
      for (const ch of CHANNELS) {
        model.leave(k, ch);
        mixed.push(rt.edge({ kind: 'client.leave', client: clientOf(k), channelId: ch }));
      }
    }
    for (let k = 200; k < 300; k++) {
      for (const ch of CHANNELS) {
        model.join(k, ch);
        mixed.push(rt.edge({ kind: 'client.join', client: clientOf(k), channelId: ch, claim: claim(ch) }));
      }
    }
    expect(mixed).toHaveLength(1000);
    await Promise.all(mixed);
    await expectCounts();

    // 100 clients with connections unregister concurrently while 100 others leave ch0.
    const last: Array<Promise<unknown>> = [];
    for (let k = 100; k < 200; k++) {
      model.unregister(k);
      last.push(
        rt.edge({
          kind: 'client.unregister',
          client: clientOf(k),
          reason: 'dropped',
          gatewayId: k % 2 ? 'gw-odd' : 'gw-even',
        }),
      );
    }
    for (let k = 200; k < 300; k++) {
      model.leave(k, 'ch0');
      last.push(rt.edge({ kind: 'client.leave', client: clientOf(k), channelId: 'ch0' }));
    }
    await Promise.all(last);
    await expectCounts();

    // Both replicas answered part of the work.
    for (const instance of instances) {
      const handled = await instance.app.get(Metrics).natsHandled.get();
      const edge = handled.values
        .filter((v) => String(v.labels.subject).endsWith('runtime-registry.v1.edge'))
        .reduce((n, v) => n + v.value, 0);
      expect(edge).toBeGreaterThan(100);
    }
  });

  async function expectCounts() {
    expect(await rt.query(OPERATOR, 'application.get', { applicationId: a })).toEqual(model.application());
    const expectedChannels = CHANNELS.map((ch) => model.channel(ch)).filter((c) => c.clientCount > 0);
    expect(await rt.query(OPERATOR, 'channels.list', { applicationId: a })).toEqual(expectedChannels);
    // Per user in channel, on a sample channel.
    const ch = expectedChannels[0]!.id;
    const users = await rt.query(OPERATOR, 'channel.users', { applicationId: a, channelId: ch });
    expect(users.reduce((n, u) => n + u.clientCount, 0)).toBe(model.channel(ch).clientCount);
    expect(users.reduce((n, u) => n + u.connectionCount, 0)).toBe(model.channel(ch).connectionCount);
    const devices = await rt.query(OPERATOR, 'channel.devices', { applicationId: a, channelId: ch });
    expect(devices.length).toBe(model.channel(ch).deviceCount);
    expect(devices.reduce((n, d) => n + d.clientCount, 0)).toBe(model.channel(ch).clientCount);
    const userInfo = await rt.query(OPERATOR, 'users.list', { applicationId: a });
    expect(userInfo.reduce((n, u) => n + u.clientCount, 0)).toBe(model.registered.size);
  }
});
