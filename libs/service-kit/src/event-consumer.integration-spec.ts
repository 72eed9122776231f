/**
 * ensureEventConsumer and EventConsumerLoop on the jest run's real NATS: the durable consumer made
 * once under races and brought to its settings; the loop delivering events, attaching again after
 * its consumer was deleted, and stopping with the event in hand acknowledged. And on a nats-server of
 * the test's own, killed and restarted under the loop: it goes on delivering.
 */
import {
  jetstream,
  jetstreamManager,
  type ConsumerMessages,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { eventStreamName, eventSubject } from '@switchboard/contracts';
import { startNatsServer, testNamespace, testServers, waitFor, type OwnNatsServer } from '@switchboard/testing';
import { ensureEventConsumer, EventConsumerLoop, type EventConsumerSpec } from './event-consumer.js';
import { ensureEventStream } from './event-stream.js';
import { JsonLogger } from './logger.js';
import { Registry } from 'prom-client';

describe('durable consumers of the event stream', () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  const created: string[] = [];
  const loops: EventConsumerLoop[] = [];
  const logger = new JsonLogger('event-consumer-test', 'error', () => undefined);
  const fresh = (tag: string) => {
    const ns = testNamespace(tag);
    created.push(eventStreamName(ns));
    return ns;
  };
  const spec: EventConsumerSpec = { name: 'test-consumer', ackWaitMs: 5000, maxDeliver: 5, maxAckPending: 100 };
  const parking = { service: 'event-consumer-test', maxAttempts: 5, registry: new Registry() };
  const publish = async (ns: string, ids: string[]) => {
    const js = jetstream(nc);
    for (const id of ids)
      await js.publish(eventSubject(ns, 'client.registered'), JSON.stringify({ event: { id } }), { msgID: id });
  };
  const idOf = (msg: JsMsg) => msg.json<{ event: { id: string } }>().event.id;

  beforeAll(async () => {
    nc = await connect({ servers: testServers().natsUrl });
    jsm = await jetstreamManager(nc);
  });

  afterAll(async () => {
    for (const loop of loops) await loop.stop(1000);
    for (const name of created) await jsm.streams.delete(name).catch(() => undefined);
    await nc.close();
  });

  it('creates a missing consumer once, however many replicas race; calling again keeps its delivery state', async () => {
    const ns = fresh('consumer_race');
    await ensureEventStream(jsm, ns);
    await Promise.all([
      ensureEventConsumer(jsm, ns, spec),
      ensureEventConsumer(jsm, ns, spec),
      ensureEventConsumer(jsm, ns, spec),
    ]);
    const info = await jsm.consumers.info(eventStreamName(ns), spec.name);
    expect(info.config).toMatchObject({
      durable_name: spec.name,
      ack_policy: 'explicit',
      deliver_policy: 'all',
      filter_subject: `${ns}.events.>`,
      ack_wait: nanos(5000),
      max_deliver: 5,
      max_ack_pending: 100,
    });
    await ensureEventConsumer(jsm, ns, spec);
    expect((await jsm.consumers.info(eventStreamName(ns), spec.name)).created).toBe(info.created);
  });

  it('brings an existing consumer to new ack wait, max deliver and max ack pending, keeping it', async () => {
    const ns = fresh('consumer_update');
    await ensureEventStream(jsm, ns);
    await ensureEventConsumer(jsm, ns, spec);
    const before = await jsm.consumers.info(eventStreamName(ns), spec.name);
    await ensureEventConsumer(jsm, ns, { ...spec, ackWaitMs: 9000, maxDeliver: -1, maxAckPending: 7 });
    const after = await jsm.consumers.info(eventStreamName(ns), spec.name);
    expect(after.config).toMatchObject({ ack_wait: nanos(9000), max_deliver: -1, max_ack_pending: 7 });
    expect(after.created).toBe(before.created);
  });

  function startLoop(
    ns: string,
    session: (messages: ConsumerMessages, loop: EventConsumerLoop) => Promise<void>,
  ): EventConsumerLoop {
    const loop: EventConsumerLoop = new EventConsumerLoop(
      {
        namespace: ns,
        spec,
        maxMessages: 16,
        connection: async () => nc,
        logger,
        parking,
        process: async () => undefined,
      },
      (messages) => session(messages, loop),
    );
    loops.push(loop);
    loop.start();
    return loop;
  }

  it('delivers every event from the start of the stream, and attaches again after its consumer was deleted', async () => {
    const ns = fresh('consumer_loop');
    await ensureEventStream(jsm, ns);
    await publish(ns, ['e1', 'e2']);
    const seen: string[] = [];
    const loop = startLoop(ns, async (messages) => {
      for await (const msg of messages) {
        seen.push(idOf(msg));
        msg.ack();
      }
    });
    await waitFor(() => seen.length === 2 && loop.attached);
    expect(seen).toEqual(['e1', 'e2']);

    await jsm.consumers.delete(eventStreamName(ns), spec.name);
    await waitFor(() => !loop.attached, { timeoutMs: 10_000 });
    await waitFor(() => loop.attached, { timeoutMs: 10_000 });
    await publish(ns, ['e3']);
    // A new consumer starts from the stream's beginning: the service skips what it processed by event id.
    await waitFor(() => seen.includes('e3'), { timeoutMs: 10_000 });
    expect(seen.slice(0, 2)).toEqual(['e1', 'e2']);
  });

  describe('with its nats-server killed and restarted', () => {
    let server: OwnNatsServer | undefined;
    let own: NatsConnection | undefined;
    let loop: EventConsumerLoop | undefined;

    afterAll(async () => {
      await loop?.stop(1000);
      await own?.close();
      await server?.stop();
    });

    it('goes on delivering: every event published before the kill and after the restart, each acknowledged', async () => {
      server = await startNatsServer();
      // Reconnecting without end, as the services' connections do.
      own = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
      const ns = testNamespace('consumer_kill');
      const ownJsm = await jetstreamManager(own);
      await ensureEventStream(ownJsm, ns);
      const js = jetstream(own);
      const publishOwn = async (ids: string[]) => {
        for (const id of ids)
          await js.publish(eventSubject(ns, 'client.registered'), JSON.stringify({ event: { id } }), { msgID: id });
      };
      const before = Array.from({ length: 200 }, (_, i) => `before-${i}`);
      const after = Array.from({ length: 50 }, (_, i) => `after-${i}`);
      await publishOwn(before);
      const seen = new Set<string>();
      loop = new EventConsumerLoop(
        {
          namespace: ns,
          spec,
          maxMessages: 16,
          connection: async () => own!,
          logger,
          parking,
          process: async () => undefined,
        },
        async (messages) => {
          for await (const msg of messages) {
            // Slow enough that the kill comes in the middle of the stream.
            await new Promise((r) => setTimeout(r, 2));
            seen.add(idOf(msg));
            msg.ack();
          }
        },
      );
      loop.start();
      await waitFor(() => seen.size >= 20, { timeoutMs: 10_000, description: 'the first 20 events' });
      await server.kill();
      const atKill = seen.size;
      await new Promise((r) => setTimeout(r, 1000));
      await server.start();
      await waitFor(
        async () =>
          !own!.isClosed() &&
          (await ownJsm.streams.info(eventStreamName(ns)).then(
            () => true,
            () => false,
          )),
        { timeoutMs: 15_000, description: 'the stream back' },
      );
      await publishOwn(after);
      await waitFor(() => [...before, ...after].every((id) => seen.has(id)), {
        timeoutMs: 30_000,
        intervalMs: 100,
        description: 'every event after the restart',
      });
      expect(atKill).toBeLessThan(before.length);
      // Nothing left unacknowledged once it has caught up.
      await waitFor(
        async () => {
          const info = await ownJsm.consumers.info(eventStreamName(ns), spec.name);
          return info.num_pending === 0 && info.num_ack_pending === 0;
        },
        { timeoutMs: 15_000, description: 'every event acknowledged' },
      );
    }, 60_000);
  });

  it('stops once the event in hand is finished and acknowledged; the rest stays for the next replica', async () => {
    const ns = fresh('consumer_stop');
    await ensureEventStream(jsm, ns);
    await publish(ns, ['s1', 's2', 's3']);
    let release!: () => void;
    const inHand = new Promise<void>((resolve) => (release = resolve));
    const handled: string[] = [];
    let holdingFirst = false;
    const loop = startLoop(ns, async (messages, self) => {
      for await (const msg of messages) {
        if (self.stopped) {
          msg.nak();
          continue;
        }
        if (idOf(msg) === 's1') {
          holdingFirst = true;
          await inHand;
        }
        handled.push(idOf(msg));
        msg.ack();
      }
    });
    // Stop only once s1 is in hand: attaching comes before the first delivery.
    await waitFor(() => loop.attached && holdingFirst);
    const stopped = loop.stop(5000);
    release();
    await stopped;
    expect(handled).toEqual(['s1']);
    expect(loop.attached).toBe(false);
    // The acknowledgement was sent: once the connection's buffer reached the server, s1 is done.
    await nc.flush();
    expect((await jsm.consumers.info(eventStreamName(ns), spec.name)).ack_floor.stream_seq).toBe(1);

    // Another replica gets what was not acknowledged (at least once), and never s1.
    const next: string[] = [];
    startLoop(ns, async (messages) => {
      for await (const msg of messages) {
        next.push(idOf(msg));
        msg.ack();
      }
    });
    await waitFor(() => next.includes('s2') && next.includes('s3'), { timeoutMs: 15_000 });
    expect(next).not.toContain('s1');
  });
});
