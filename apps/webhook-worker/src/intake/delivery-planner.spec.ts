import type { EventInfo, ResolvedWebhook } from '@switchboard/contracts';
import {
  deliveryIdFor,
  jobIdFor,
  MAX_EVENTS_PER_BATCH,
  planDeliveries,
  planJobs,
  type MatchedEvent,
} from './delivery-planner.js';

const hook = (id: string, batch = false): ResolvedWebhook => ({
  id,
  source: 'application',
  url: `https://x.test/${id}`,
  events: null,
  batch,
  reliable: false,
  disabled: false,
});
const event = (id: string, timestamp: number, type = 'client.updated'): EventInfo =>
  ({
    id,
    timestamp,
    origin: 'client',
    type,
    forced: false,
    channel: null,
    client: null,
    connection: null,
    message: null,
  }) as EventInfo;
let seq = 0;
const matched = (e: EventInfo, webhooks: ResolvedWebhook[], applicationId = 'app-1'): MatchedEvent => ({
  event: e,
  seq: ++seq,
  applicationId,
  organizationId: 'org-1',
  channelId: null,
  webhooks,
});

describe('planDeliveries', () => {
  it('one delivery per event for a plain webhook, with an id derived from (webhook, event)', () => {
    const plan = planDeliveries([matched(event('e1', 1), [hook('w')]), matched(event('e2', 1), [hook('w')])]);
    expect(plan.map((d) => d.events.map((e) => e.id))).toEqual([['e1'], ['e2']]);
    expect(plan[0]!.id).toBe(deliveryIdFor('w\u0000e1'));
    expect(plan[0]!.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(planDeliveries([matched(event('e1', 1), [hook('w')])])[0]!.id).toBe(plan[0]!.id);
  });

  it('a batch webhook gets one delivery per moment (application + timestamp), events in stream order', () => {
    const b = hook('b', true);
    const plan = planDeliveries([
      matched(event('e1', 100), [b]),
      matched(event('e2', 200), [b]),
      matched(event('e3', 100), [b]),
      matched(event('e4', 100), [b], 'app-2'),
    ]);
    expect(plan.map((d) => [d.applicationId, d.events.map((e) => e.id)])).toEqual([
      ['app-1', ['e1', 'e3']],
      ['app-1', ['e2']],
      ['app-2', ['e4']],
    ]);
    expect(new Set(plan.map((d) => d.id)).size).toBe(3);
    // A batch delivery takes the stream position of its first event.
    expect(plan[0]!.order).toBeLessThan(plan[1]!.order);
  });

  it('mixes plain and batch webhooks, and skips webhooks without URL', () => {
    const plan = planDeliveries([
      matched(event('e1', 5), [hook('p'), hook('b', true), { ...hook('n'), url: null }]),
      matched(event('e2', 5), [hook('p'), hook('b', true)]),
    ]);
    expect(plan.map((d) => `${d.webhook.id}:${d.events.map((e) => e.id).join('+')}`)).toEqual([
      'p:e1',
      'b:e1+e2',
      'p:e2',
    ]);
  });

  it('splits a large moment into calls of at most MAX_EVENTS_PER_BATCH events', () => {
    const b = hook('b', true);
    const plan = planDeliveries(
      Array.from({ length: MAX_EVENTS_PER_BATCH + 3 }, (_, i) => matched(event(`e${i}`, 7), [b])),
    );
    expect(plan.map((d) => d.events.length)).toEqual([MAX_EVENTS_PER_BATCH, 3]);
  });
});

describe('planJobs', () => {
  const inChannel = (m: MatchedEvent, channelId: string): MatchedEvent => ({ ...m, channelId });

  it('puts the deliveries of one webhook in one job, at most maxPerJob, a run of one channel never split and later runs of a channel in later jobs', () => {
    const w = hook('w');
    const plan = planDeliveries([
      inChannel(matched(event('a1', 1), [w]), 'a'),
      inChannel(matched(event('b1', 1), [w]), 'b'),
      inChannel(matched(event('a2', 1), [w]), 'a'),
      inChannel(matched(event('a3', 1), [w]), 'a'),
      inChannel(matched(event('b2', 1), [w]), 'b'),
      inChannel(matched(event('c1', 1), [w]), 'c'),
    ]);
    const ids = (maxPerJob: number) => planJobs(plan, maxPerJob).map((j) => j.deliveries.map((d) => d.events[0]!.id));
    // Runs of at most 2: a1 a2 | b1 b2 | a3 | c1; packed by 2 without splitting a run.
    expect(ids(2)).toEqual([
      ['a1', 'a2'],
      ['b1', 'b2'],
      ['a3', 'c1'],
    ]);
    // Runs a1 a2 a3 | b1 b2 | c1; a job of 4 takes the first run and not the second (it would not fit whole).
    expect(ids(4)).toEqual([
      ['a1', 'a2', 'a3'],
      ['b1', 'b2', 'c1'],
    ]);
    expect(ids(50)).toEqual([['a1', 'a2', 'a3', 'b1', 'b2', 'c1']]);
    expect(ids(1)).toEqual([['a1'], ['b1'], ['a2'], ['a3'], ['b2'], ['c1']]);
    // A job of several has a name-based id of its deliveries, recorded on each; a job of one is its delivery.
    const jobs = planJobs(plan, 5);
    expect(jobs.map((j) => j.deliveries.length)).toEqual([5, 1]);
    expect(jobs[0]!.id).toBe(jobIdFor(jobs[0]!.deliveries.map((d) => d.id)));
    expect(jobs[0]!.id).not.toBe(jobs[0]!.deliveries[0]!.id);
    expect(jobs[0]!.deliveries.map((d) => d.jobId)).toEqual(Array(5).fill(jobs[0]!.id));
    expect(jobs[1]!.id).toBe(jobs[1]!.deliveries[0]!.id);
    expect(jobs[1]!.deliveries[0]!.jobId).toBeNull();
  });

  it('keeps webhooks and targets apart; events outside channels (no order to keep) go in lanes of their own', () => {
    const w = hook('w');
    const other = { ...hook('w'), url: 'https://x.test/elsewhere' };
    const plan = planDeliveries([
      inChannel(matched(event('e1', 1), [w, hook('v')]), 'a'),
      inChannel(matched(event('e2', 1), [other]), 'a'),
      matched(event('e3', 1), [w]),
      matched(event('e4', 1), [w]),
      inChannel(matched(event('e5', 1), [w, hook('v')]), 'a'),
    ]);
    const jobs = planJobs(plan, 50);
    expect(jobs.map((j) => j.deliveries.map((d) => `${d.webhook.id}:${d.events[0]!.id}`))).toEqual([
      ['w:e1', 'w:e5', 'w:e3', 'w:e4'],
      ['v:e1', 'v:e5'],
      ['w:e2'],
    ]);
  });
});
