/**
 * The events recording-service announces go through a transactional outbox: an event committed
 * with its state change while NATS is unreachable, or left behind by a process that died before
 * (or after) publishing it, is published later, exactly once per event id. recording-service
 * reaches NATS through a TCP relay the test can cut, as a network outage would.
 */
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { eventStreamName, eventSubject, type DomainEvent } from '@switchboard/contracts';
import { testServers, waitFor } from '@switchboard/testing';
import pg from 'pg';
import { startHarness, type Harness } from './harness.js';

/** A TCP relay to `target` that can stop (refusing and cutting every connection) and start again on the same port. */
async function tcpRelay(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `nats://127.0.0.1:${port}`,
    /** Stops listening and cuts every connection (also when already stopped). */
    async stop() {
      const closed = new Promise((resolve) => server.close(() => resolve(undefined)));
      for (const s of sockets) s.destroy();
      await closed;
    },
    async start() {
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
  };
}

describe('recording-service event outbox', () => {
  let h: Harness;
  let relay: Awaited<ReturnType<typeof tcpRelay>>;
  let db: pg.Pool;

  const sql = async <T extends pg.QueryResultRow>(text: string, params: unknown[] = []) =>
    (await db.query<T>(text, params)).rows;

  /** How many messages of the event stream carry each event id. */
  async function streamCounts(): Promise<Map<string, number>> {
    const jsm = await jetstreamManager(h.nc);
    const name = eventStreamName(h.ns);
    const { first_seq, last_seq } = (await jsm.streams.info(name)).state;
    const counts = new Map<string, number>();
    for (let seq = first_seq; seq > 0 && seq <= last_seq; seq++) {
      const msg = await jsm.streams.getMessage(name, { seq }).catch(() => null);
      if (!msg) continue;
      const id = (msg.json() as DomainEvent).event.id;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  }

  beforeAll(async () => {
    const nats = new URL(testServers().natsUrl);
    relay = await tcpRelay({ host: nats.hostname, port: Number(nats.port) });
    h = await startHarness('outbox', {
      NATS_URL: relay.url,
      RECORDINGS_OUTBOX_RELAY_INTERVAL_MS: '300',
      RECORDINGS_SWEEP_INTERVAL_MS: '300',
    });
    await h.start();
    db = new pg.Pool({ connectionString: h.db.url, max: 2 });
    db.on('error', () => undefined);
  }, 60_000);

  afterAll(async () => {
    await db?.end();
    await h?.close();
    await relay?.stop();
  });

  it('an expiry committed while NATS is unreachable is announced once NATS is back, once', async () => {
    const id = randomUUID();
    const now = Date.now();
    await relay.stop();
    // A finished recording whose expiry has passed: the sweeper (Redis, PostgreSQL) deletes it without NATS.
    await sql(
      `INSERT INTO recording.channel_recording (id, organization_id, application_id, channel_id, created_on, modified_on, start_timestamp, stop_timestamp, expiry_timestamp, stage, stage_changed_on)
       VALUES ($1, 'org-outbox', 'app-outbox', 'room', $2, $2, $3, $4, $5, 'ready', $2)`,
      [id, now, now - 60_000, now - 30_000, now - 1000],
    );
    await waitFor(
      async () =>
        (await sql<{ deleted: boolean }>('SELECT deleted FROM recording.channel_recording WHERE id = $1', [id]))[0]
          ?.deleted,
      {
        timeoutMs: 20000,
        description: 'the sweeper to delete the expired recording',
      },
    );
    // Committed with the deletion, not published: it waits in the outbox while NATS is unreachable.
    const waiting = await sql<{ event_id: string; event_type: string }>(
      'SELECT event_id, event_type FROM recording.outbox',
    );
    expect(waiting).toEqual([{ event_id: expect.any(String), event_type: 'channel.recording.expired' }]);
    const eventId = waiting[0]!.event_id;
    await new Promise((resolve) => setTimeout(resolve, 1000)); // several relay rounds fail meanwhile
    expect((await sql('SELECT event_id FROM recording.outbox')).length).toBe(1);
    expect((await streamCounts()).get(eventId)).toBeUndefined();

    await relay.start();
    await waitFor(async () => (await sql('SELECT 1 FROM recording.outbox')).length === 0, {
      timeoutMs: 30000,
      description: 'the outbox to be relayed',
    });
    const counts = await streamCounts();
    expect(counts.get(eventId)).toBe(1);
    const jsm = await jetstreamManager(h.nc);
    const last = await jsm.streams.getMessage(eventStreamName(h.ns), {
      last_by_subj: eventSubject(h.ns, 'channel.recording.expired'),
    });
    expect(last?.json<DomainEvent>()).toMatchObject({
      organizationId: 'org-outbox',
      applicationId: 'app-outbox',
      event: { id: eventId, type: 'channel.recording.expired', channel: { channelRecording: { id, url: null } } },
    });
  }, 90_000);

  it('relays on start-up what a stopped process left: unpublished events, and one published before the crash, each once', async () => {
    await h.service.stop('SIGKILL');
    const event = (type: string): DomainEvent =>
      ({
        event: {
          id: randomUUID(),
          timestamp: Date.now(),
          origin: 'server',
          type,
          forced: false,
          channel: null,
          client: null,
          connection: null,
          message: null,
        },
        applicationId: 'app-outbox',
        organizationId: 'org-outbox',
      }) as unknown as DomainEvent;
    const never = event('channel.recording.ready');
    const published = event('channel.recording.audio.ready');
    const alsoNever = event('channel.recording.video.ready');
    for (const e of [never, published, alsoNever]) {
      await sql('INSERT INTO recording.outbox (event_id, event_type, payload, created_on) VALUES ($1, $2, $3, $4)', [
        e.event.id,
        e.event.type,
        JSON.stringify(e),
        Date.now(),
      ]);
    }
    // The dead process had published this one, but died before deleting its row.
    await jetstream(h.nc).publish(eventSubject(h.ns, published.event.type), JSON.stringify(published), {
      msgID: published.event.id,
    });

    await h.start({ NATS_URL: relay.url });
    await waitFor(async () => (await sql('SELECT 1 FROM recording.outbox')).length === 0, {
      timeoutMs: 30000,
      description: 'the outbox to be relayed on start-up',
    });
    const counts = await streamCounts();
    expect([never, published, alsoNever].map((e) => counts.get(e.event.id))).toEqual([1, 1, 1]);
  }, 90_000);
});
