/**
 * Silence the registry could not hear proves nothing: a NATS outage (a nats-server of the test's
 * own, killed and started again), a Redis outage (the registry reaches the run's Redis through a
 * TCP link the test cuts) and a registry that starts after every replica was down, each longer
 * than SERVER_HEARTBEAT_TIMEOUT_SECONDS + CLIENT_DROP_GRACE_SECONDS, drop no client of a gateway
 * that kept heartbeating and forget no media server that did (nor its PATCH active:false). A
 * gateway or media server that really went silent is still dropped, once the registry has heard
 * the others for the whole window. Thresholds scaled down: 2 s + 1 s, retention 4 s.
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { INestApplication } from '@nestjs/common';
import { RuntimeSubjects, type Heartbeat } from '@switchboard/contracts';
import {
  flushRedisPrefix,
  freePort,
  startNatsServer,
  testNamespace,
  testServers,
  waitFor,
  type OwnNatsServer,
} from '@switchboard/testing';
import { Redis } from 'ioredis';
import { RegistryKeys } from '../store/keys.js';
import {
  claim,
  EventReader,
  OPERATOR,
  RegistryClient,
  registerReport,
  registryEnv,
  scopeOf,
  startRegistry,
  WireError,
  type TestClient,
} from '../testing/harness.testing.js';

const ORG = 'org-silence';
const TENANT = scopeOf(ORG);
const WINDOW_MS = 3000; // SERVER_HEARTBEAT_TIMEOUT_SECONDS 2 + CLIENT_DROP_GRACE_SECONDS 1
const RETENTION_MS = 4000;
const BEAT_MS = 200;
const encoder = new TextEncoder();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function gateway(id: string): Heartbeat {
  return {
    role: 'gateway',
    server: {
      id,
      region: null,
      version: '0.1.0',
      addresses: [],
      active: true,
      lastHeartbeat: new Date().toISOString(),
    },
  };
}

function mediaServer(id: string): Heartbeat {
  return {
    role: 'mediaserver',
    server: {
      id,
      region: 'eu',
      version: '1.0.0',
      addresses: ['udp://10.0.0.1:3478'],
      active: true,
      lastHeartbeat: new Date().toISOString(),
    },
  };
}

/**
 * Gateways and media servers heartbeating every BEAT_MS over a connection of their own that reconnects, as they would.
 */
class Senders {
  private readonly beating = new Map<string, Heartbeat>();
  private readonly timer: NodeJS.Timeout;
  /** Holds every heartbeat (nobody would hear them, or the registry should hear them only later). */
  paused = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly ns: string,
  ) {
    this.timer = setInterval(() => {
      if (!this.paused) for (const hb of this.beating.values()) this.publish(hb);
    }, BEAT_MS);
  }

  beat(hb: Heartbeat) {
    this.beating.set(hb.server.id, hb);
    this.publish(hb);
  }

  /** The server is gone: no heartbeat from it any more. */
  silence(id: string) {
    this.beating.delete(id);
  }

  close() {
    clearInterval(this.timer);
  }

  private publish(hb: Heartbeat) {
    const data = { ...hb, server: { ...hb.server, lastHeartbeat: new Date().toISOString() } };
    try {
      this.nc.publish(
        `${this.ns}.${RuntimeSubjects.heartbeat}`,
        encoder.encode(JSON.stringify({ pattern: RuntimeSubjects.heartbeat, data })),
      );
    } catch {
      // closed: the test is ending
    }
  }
}

/** A TCP link to the run's Redis that the test can cut (every connection dropped, new ones refused) and restore. */
class RedisLink {
  private readonly sockets = new Set<net.Socket>();
  private down = false;

  private constructor(
    private readonly server: net.Server,
    readonly url: string,
  ) {}

  static async open(target: string): Promise<RedisLink> {
    const to = new URL(target);
    const port = await freePort();
    const server = net.createServer();
    const url = new URL(target);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    const link = new RedisLink(server, url.toString());
    server.on('connection', (client) => link.accept(client, to.hostname, Number(to.port)));
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return link;
  }

  private accept(client: net.Socket, host: string, port: number) {
    if (this.down) {
      client.destroy();
      return;
    }
    const upstream = net.connect(port, host);
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      this.sockets.add(a);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        this.sockets.delete(a);
        b.destroy();
      });
      a.pipe(b);
    }
  }

  cut() {
    this.down = true;
    for (const s of this.sockets) s.destroy();
  }

  restore() {
    this.down = false;
  }

  async close() {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe('heartbeat silence the registry could not hear', () => {
  const ns = testNamespace('silence');
  let nats: OwnNatsServer;
  let link: RedisLink;
  let redis: Redis;
  let env: Record<string, string>;
  let registry: { app: INestApplication; url: string } | undefined;
  let nc: NatsConnection;
  let rt: RegistryClient;
  let events: EventReader;
  let senders: Senders;
  const GW_LIVE = `gw-live-${randomUUID()}`;

  const clientOf = (applicationId: string, name: string): TestClient => ({
    applicationId,
    userId: `u-${name}`,
    deviceId: 'd',
    clientId: `c-${name}`,
  });
  /** The clients registered on c's device (none when its application is no longer in use). */
  async function clientsOf(c: TestClient): Promise<string[]> {
    try {
      return (
        await rt.query(TENANT, 'device.clients', {
          applicationId: c.applicationId,
          userId: c.userId,
          deviceId: c.deviceId,
        })
      ).map((x) => x.id);
    } catch (e) {
      if (e instanceof WireError && e.code === 'NotFound') return [];
      throw e;
    }
  }

  /** Waits until the registry recorded the heartbeats of these gateways (application `a` in use). */
  async function known(a: string, ...gateways: string[]) {
    await waitFor(async () => {
      const env = await rt.query(OPERATOR, 'application.environment', { applicationId: a });
      return gateways.every((id) => env.gateways.some((g) => g.id === id && g.active));
    });
  }

  /** The registry's registry_heartbeats_heard_seconds. */
  async function heardSeconds(): Promise<number> {
    const text = await (await fetch(`${registry!.url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('registry_heartbeats_heard_seconds'));
    return Number(line?.split(' ').pop());
  }

  /** The client survived: still registered, nothing published for its departure, and its reports still find it. */
  async function stillThere(c: TestClient) {
    expect(await clientsOf(c)).toEqual([c.clientId]);
    const departures = (await events.all())
      .map((e) => e.event.event)
      .filter(
        (e) =>
          e.client?.applicationId === c.applicationId && e.client.id === c.clientId && e.type === 'client.unregistered',
      );
    expect(departures).toEqual([]);
    await expect(
      rt.edge({ kind: 'client.join', client: c, channelId: 'later', claim: claim('later') }),
    ).resolves.toBeDefined();
  }

  beforeAll(async () => {
    nats = await startNatsServer();
    link = await RedisLink.open(testServers().redisUrl);
    redis = new Redis(testServers().redisUrl);
    env = registryEnv(ns, {
      NATS_URL: nats.url,
      REDIS_URL: link.url,
      SERVER_HEARTBEAT_TIMEOUT_SECONDS: '2',
      CLIENT_DROP_GRACE_SECONDS: '1',
      SERVER_RETENTION_SECONDS: String(RETENTION_MS / 1000),
      REGISTRY_SWEEP_INTERVAL_MS: '100',
      EVENT_PUBLISH_TIMEOUT_MS: '500',
    });
    registry = await startRegistry(env);
    nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    rt = new RegistryClient(nc, ns);
    events = await EventReader.open(nc, ns);
    senders = new Senders(nc, ns);
    senders.beat(gateway(GW_LIVE));
  });

  afterAll(async () => {
    senders?.close();
    await nc?.close();
    await registry?.app.close();
    await nats?.stop();
    await link?.close();
    redis?.disconnect();
    await flushRedisPrefix(testServers().redisUrl, `${ns}:`);
  });

  it('a NATS outage longer than the window drops no client of a live gateway and forgets no live media server', async () => {
    const a = 'app-nats';
    const GW_DEAD = `gw-dead-${randomUUID()}`;
    const MS_LIVE: string = randomUUID();
    const MS_DEAD: string = randomUUID();
    const live = clientOf(a, 'live');
    const dead = clientOf(a, 'dead');
    for (const hb of [gateway(GW_DEAD), mediaServer(MS_LIVE), mediaServer(MS_DEAD)]) senders.beat(hb);
    await rt.edge(registerReport(live, ORG, GW_LIVE));
    await rt.edge({ kind: 'client.join', client: live, channelId: 'room', claim: claim('room') });
    await rt.edge(registerReport(dead, ORG, GW_DEAD));
    await known(a, GW_LIVE, GW_DEAD);
    // An accepted write about a live media server: it must outlast the outage.
    await waitFor(
      async () =>
        (await rt.query(OPERATOR, 'mediaservers.list', {})).filter((m) => [MS_LIVE, MS_DEAD].includes(m.id) && m.active)
          .length === 2,
    );
    await rt.command(OPERATOR, { kind: 'mediaserver.update', mediaServerId: MS_LIVE, patch: { active: false } });

    // GW_DEAD and MS_DEAD really go with the outage; the others keep heartbeating (unheard while it lasts).
    senders.silence(GW_DEAD);
    senders.silence(MS_DEAD);
    await nats.kill();
    expect(await heardSeconds()).toBe(0);
    await sleep(RETENTION_MS + 1000);
    await nats.start();

    // Once the registry has heard the others for the whole window, what really went silent goes.
    await waitFor(async () => (await clientsOf(dead)).length === 0, {
      timeoutMs: 30000,
      description: 'the client of the dead gateway to be dropped',
    });
    expect(await heardSeconds()).toBeGreaterThanOrEqual(WINDOW_MS / 1000);
    await waitFor(async () => !(await rt.query(OPERATOR, 'mediaservers.list', {})).some((m) => m.id === MS_DEAD), {
      timeoutMs: 30000,
      description: 'the dead media server to be forgotten',
    });
    // Kept, with its PATCH: forgotten and heard again, it would be back enabled (active).
    expect((await rt.query(OPERATOR, 'mediaserver.get', { mediaServerId: MS_LIVE })).active).toBe(false);
    await rt.command(OPERATOR, { kind: 'mediaserver.update', mediaServerId: MS_LIVE, patch: { active: true } });
    expect((await rt.query(OPERATOR, 'mediaserver.get', { mediaServerId: MS_LIVE })).active).toBe(true);
    await stillThere(live);
  });

  it('a registry starting after all replicas were down longer than the window waits a full window before dropping', async () => {
    const a = 'app-restart';
    const GW_DEAD = `gw-dead-${randomUUID()}`;
    const live = clientOf(a, 'live');
    const dead = clientOf(a, 'dead');
    senders.beat(gateway(GW_DEAD));
    await rt.edge(registerReport(live, ORG, GW_LIVE));
    await rt.edge(registerReport(dead, ORG, GW_DEAD));
    await known(a, GW_LIVE, GW_DEAD);

    // No replica runs: heartbeats go unheard (held here, so that the first ones the new replica
    // hears come after its first housekeeping pass, as a gateway's next heartbeat may).
    senders.paused = true;
    senders.silence(GW_DEAD);
    await registry!.app.close();
    registry = undefined;
    await sleep(WINDOW_MS + 500);
    // The first pass of a replica reconciles the applications index: an entry removed here comes
    // back with it, which tells the test that pass is over.
    const index = new RegistryKeys(`${ns}:`).appsIndex();
    expect(await redis.hdel(index, a)).toBe(1);
    registry = await startRegistry(env);
    await waitFor(async () => (await redis.hexists(index, a)) === 1, {
      description: 'the first housekeeping pass of the new replica',
    });
    senders.paused = false;

    await waitFor(async () => (await clientsOf(dead)).length === 0, {
      timeoutMs: 30000,
      description: 'the client of the dead gateway to be dropped',
    });
    await stillThere(live);
  });

  it('a Redis outage longer than the window drops no client of a live gateway', async () => {
    const a = 'app-redis';
    const GW_DEAD = `gw-dead-${randomUUID()}`;
    const live = clientOf(a, 'live');
    const dead = clientOf(a, 'dead');
    senders.beat(gateway(GW_DEAD));
    await rt.edge(registerReport(live, ORG, GW_LIVE));
    await rt.edge(registerReport(dead, ORG, GW_DEAD));
    await known(a, GW_LIVE, GW_DEAD);

    // Heartbeats cannot be recorded while Redis is out of reach.
    senders.silence(GW_DEAD);
    senders.paused = true;
    link.cut();
    await sleep(WINDOW_MS + 500);
    link.restore();
    // The registry reaches Redis again; the gateways' next heartbeats come a few passes later.
    await waitFor(async () => (await rt.query(OPERATOR, 'mediaservers.list', {})) !== undefined, {
      timeoutMs: 10000,
      description: 'the registry to reach Redis again',
    });
    await sleep(300);
    senders.paused = false;

    await waitFor(async () => (await clientsOf(dead)).length === 0, {
      timeoutMs: 30000,
      description: 'the client of the dead gateway to be dropped',
    });
    await stillThere(live);
  });
});
