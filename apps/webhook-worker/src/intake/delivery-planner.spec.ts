import type { EventInfo, ResolvedWebhook } from '@switchboard/contracts';
import { deliveryIdFor, MAX_EVENTS_PER_BATCH, planDeliveries, type MatchedEvent } from './delivery-planner.js';

const hook = (id: string, batch = false): ResolvedWebhook => ({ id, source: 'application', url: `https://x.test/${id}`, events: null, batch, reliable: false, disabled: false });
const event = (id: string, timestamp: number, type = 'client.updated'): EventInfo =>
  ({ id, timestamp, origin: 'client', type, forced: false, channel: null, client: null, connection: null, message: null }) as EventInfo;
let seq = 0;
const matched = (e: EventInfo, webhooks: ResolvedWebhook[], applicationId = 'app-1'): MatchedEvent => ({ event: e, seq: ++seq, applicationId, organizationId: 'org-1', channelId: null, webhooks });

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
    const plan = planDeliveries([matched(event('e1', 5), [hook('p'), hook('b', true), { ...hook('n'), url: null }]), matched(event('e2', 5), [hook('p'), hook('b', true)])]);
    expect(plan.map((d) => `${d.webhook.id}:${d.events.map((e) => e.id).join('+')}`)).toEqual(['p:e1', 'b:e1+e2', 'p:e2']);
  });

  it('splits a large moment into calls of at most MAX_EVENTS_PER_BATCH events', () => {
    const b = hook('b', true);
    const plan = planDeliveries(Array.from({ length: MAX_EVENTS_PER_BATCH + 3 }, (_, i) => matched(event(`e${i}`, 7), [b])));
    expect(plan.map((d) => d.events.length)).toEqual([MAX_EVENTS_PER_BATCH, 3]);
  });
});
