import type { JsMsg } from '@nats-io/jetstream';
import { Registry } from 'prom-client';
import { deliveryLimitOf, EventParking, isLastChance, ReplayedMessage, type GroupHandler } from './event-parking.js';
import { JsonLogger } from './logger.js';

interface FakeMsg {
  seq: number;
  subject: string;
  data: Uint8Array;
  info: { deliveryCount: number };
  didAck: boolean;
  done: string[];
  ack(): void;
  nak(delay?: number): void;
  term(): void;
  working(): void;
}

function message(seq: number, deliveryCount = 1): FakeMsg {
  const settle = (m: FakeMsg, what: string) => {
    if (m.didAck) return;
    m.didAck = true;
    m.done.push(what);
  };
  return {
    seq,
    subject: 'ns.events.x',
    data: new TextEncoder().encode(`{"seq":${seq}}`),
    info: { deliveryCount },
    didAck: false,
    done: [],
    ack() {
      settle(this, 'ack');
    },
    nak() {
      settle(this, 'nak');
    },
    term() {
      settle(this, 'term');
    },
    working() {},
  };
}

const down = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

function setUp(options: { failPublish?: boolean; stopping?: boolean } = {}) {
  const published: Array<{ subject: string; body: Record<string, unknown>; msgID: string }> = [];
  const registry = new Registry();
  const parking = new EventParking({
    namespace: 'ns',
    consumer: 'test-consumer',
    stream: 'ns-events',
    parking: { service: 'test-service', maxAttempts: 3, registry },
    logger: new JsonLogger('parking-test', 'error', () => undefined),
    stopping: () => options.stopping ?? false,
    publish: async (subject, data, msgID) => {
      if (options.failPublish) throw new Error('no JetStream');
      published.push({ subject, body: JSON.parse(new TextDecoder().decode(data)) as Record<string, unknown>, msgID });
    },
  });
  const parkedCount = async () =>
    (await registry.getSingleMetric('events_parked_total')!.get()).values.reduce((n, v) => n + v.value, 0);
  return { parking, published, parkedCount };
}

/**
 * A handler acknowledging every message of its group unless the group holds a poison one (seq in `poison`), or failing
 * with `error`.
 */
function handlerFailingOn(
  poison: Set<number>,
  error: () => Error = () => new Error('invalid input syntax for type json'),
  groups: number[][] = [],
): GroupHandler {
  return async (messages) => {
    groups.push(messages.map((m) => m.seq));
    if (messages.some((m) => poison.has(m.seq))) throw error();
    for (const m of messages) m.ack();
  };
}

const asJs = (msgs: FakeMsg[]) => msgs as unknown as JsMsg[];

describe('EventParking', () => {
  it('a group failing because of one event is processed again in halves: every other event goes through, the poison one is handed back', async () => {
    const t = setUp();
    const msgs = Array.from({ length: 8 }, (_, i) => message(i + 1));
    const groups: number[][] = [];
    await t.parking.handle(asJs(msgs), handlerFailingOn(new Set([6]), undefined, groups));
    expect(msgs.filter((m) => m.seq !== 6).every((m) => m.done.join() === 'ack')).toBe(true);
    expect(msgs[5]!.done).toEqual(['nak']);
    expect(t.published).toEqual([]);
    // Stream order kept: the halves before the poison one went first.
    expect(groups).toEqual([[1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4], [5, 6, 7, 8], [5, 6], [5], [6], [7, 8]]);
  });

  it('an event failing at its last attempt is parked (published with its payload and error, deduplicated by stream, sequence and consumer), counted, then acknowledged', async () => {
    const t = setUp();
    const msgs = [message(1, 3), message(2, 3), message(3, 1)];
    await t.parking.handle(asJs(msgs), handlerFailingOn(new Set([2])));
    expect(msgs.map((m) => m.done)).toEqual([['ack'], ['ack'], ['ack']]);
    expect(t.published).toHaveLength(1);
    const { subject, body, msgID } = t.published[0]!;
    expect(subject).toBe('ns.parked.test-service.test-consumer');
    expect(msgID).toBe('ns-events:2:test-consumer');
    expect(body).toMatchObject({
      service: 'test-service',
      consumer: 'test-consumer',
      stream: 'ns-events',
      streamSequence: 2,
      attempts: 3,
      error: 'invalid input syntax for type json',
    });
    expect(Buffer.from(body.payload as string, 'base64').toString()).toBe('{"seq":2}');
    expect(await t.parkedCount()).toBe(1);
  });

  it('an event that cannot be parked (JetStream unavailable) is handed back, never acknowledged', async () => {
    const t = setUp({ failPublish: true });
    const msg = message(4, 3);
    await t.parking.handle(asJs([msg]), handlerFailingOn(new Set([4])));
    expect(msg.done).toEqual(['nak']);
    expect(await t.parkedCount()).toBe(0);
  });

  it('a dependency that is down never parks: at the last attempt the group is handed back whole', async () => {
    const t = setUp();
    const msgs = [message(1, 10), message(2, 10)];
    const groups: number[][] = [];
    await t.parking.handle(asJs(msgs), handlerFailingOn(new Set([1]), down, groups));
    expect(msgs.map((m) => m.done)).toEqual([['nak'], ['nak']]);
    expect(groups).toHaveLength(1);
    expect(t.published).toEqual([]);
    // Also when one event alone fails that way.
    const single = message(3, 10);
    await t.parking.handle(asJs([single]), handlerFailingOn(new Set([3]), down));
    expect(single.done).toEqual(['nak']);
    expect(t.published).toEqual([]);
  });

  it('an event near the delivery limit (a long outage, a consumer crashing on it) is parked, not processed, so JetStream never drops it', async () => {
    const { parking, published } = setUp();
    const nearLimit = message(7, deliveryLimitOf(3) - 5);
    const ordinary = message(8, 1);
    const seen: number[] = [];
    await parking.handle([nearLimit, ordinary] as unknown as JsMsg[], async (group) => {
      for (const msg of group) {
        seen.push(msg.seq);
        msg.ack();
      }
    });
    expect(seen).toEqual([8]);
    expect(nearLimit.done).toEqual(['ack']);
    expect(published).toHaveLength(1);
    expect(published[0]!.body).toMatchObject({ streamSequence: 7, attempts: deliveryLimitOf(3) - 5 });
    expect(String(published[0]!.body.error)).toContain('without an outcome');
    expect(isLastChance(message(9, deliveryLimitOf(3) - 10) as unknown as JsMsg, 3)).toBe(false);
  });

  it('while stopping, a failed group is handed back as it is', async () => {
    const t = setUp({ stopping: true });
    const msgs = [message(1, 5), message(2, 5)];
    await t.parking.handle(asJs(msgs), handlerFailingOn(new Set([1])));
    expect(msgs.map((m) => m.done)).toEqual([['nak'], ['nak']]);
    expect(t.published).toEqual([]);
  });

  it('park() parks at once whatever the attempts (an unreadable event); a replayed message is failed instead, not parked again', async () => {
    const t = setUp();
    const msg = message(9, 1);
    await t.parking.park(asJs([msg])[0]!, 'not JSON');
    expect(msg.done).toEqual(['ack']);
    expect(t.published[0]!.body).toMatchObject({ attempts: 1, error: 'not JSON' });
    const replayed = new ReplayedMessage('ns.events.x', new Uint8Array([1]), 9, 'ns-events');
    await t.parking.park(replayed as unknown as JsMsg, 'not JSON');
    expect(replayed.outcome).toEqual({ ok: false, error: 'not JSON' });
    expect(t.published).toHaveLength(1);
  });

  it('the error is made safe for PostgreSQL text and JSON (NUL and lone surrogates escaped)', async () => {
    const t = setUp();
    const msg = message(1, 3);
    await t.parking.handle(
      asJs([msg]),
      handlerFailingOn(new Set([1]), () => new Error('bad \u0000 and \ud800 here')),
    );
    expect(t.published[0]!.body.error).toBe('bad \\u0000 and \ufffd here');
  });
});
