import type { EventInfo, ResolvedWebhook } from '@switchboard/contracts';
import { createHash } from 'node:crypto';

/** An event with its owner and the webhooks that want it. */
export interface MatchedEvent {
  event: EventInfo;
  /** Stream sequence of the event's message (its position in the stream). */
  seq: number;
  applicationId: string;
  organizationId: string;
  channelId: string | null;
  webhooks: readonly ResolvedWebhook[];
}

/** One call to one webhook: one event, or (batch webhook) the events of one moment. */
export interface PlannedDelivery {
  id: string;
  webhook: ResolvedWebhook & { url: string };
  organizationId: string;
  applicationId: string;
  channelId: string | null;
  events: EventInfo[];
  /** Stream sequence of the first event: the delivery's place in its webhook's order. */
  order: number;
  /** The id of the BullMQ job of several deliveries it goes in (null or absent: a job of its own, id = delivery id). */
  jobId?: string | null;
}

/** Deliveries of one target queued as one BullMQ job: a lane per ordering key (see planJobs). */
export interface PlannedJob {
  id: string;
  deliveries: PlannedDelivery[];
}

/** Events in one batch call, at most (a larger moment is split into several calls, in order). */
export const MAX_EVENTS_PER_BATCH = 500;

const NAMESPACE = Buffer.from('6d1f5c2e8a9b4c7d9e0f1a2b3c4d5e6f', 'hex');

/** A name-based (version 5 style, SHA-1) UUID: the same delivery gets the same id when planned again. */
export function deliveryIdFor(name: string): string {
  const hash = createHash('sha1').update(NAMESPACE).update(name, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The id of a job: its delivery's id when it carries one, else a name-based id of its deliveries. */
export function jobIdFor(deliveryIds: readonly string[]): string {
  return deliveryIds.length === 1 ? deliveryIds[0]! : deliveryIdFor(`job\u0000${deliveryIds.join('\u0000')}`);
}

/**
 * The ordering key of a delivery: its webhook and its channel; outside a channel, its client; else
 * the event itself (no order to keep).
 */
export function orderingKey(data: {
  webhookId: string;
  channelId: string | null;
  events: readonly EventInfo[];
}): string {
  const first = data.events[0];
  const scope =
    data.channelId !== null
      ? `channel:${data.channelId}`
      : first?.client
        ? `client:${first.client.id}`
        : `event:${first?.id ?? ''}`;
  return `${data.webhookId}\u0000${scope}`;
}

/**
 * Groups planned deliveries (in stream order) into jobs. First into runs: the consecutive
 * deliveries of one ordering key (see orderingKey), at most `maxPerJob`, in stream order. Then the
 * runs of one target (webhook, URL, flags, owner) are packed into jobs of at most `maxPerJob`
 * deliveries, in the order of their first delivery, a run never split: a job holds at most one
 * run of a key (one lane, see lanesOf), and a key's later runs go in later jobs. Jobs come in the
 * order of their first delivery. A delivery of a job of several gets its `jobId` (recorded with
 * it: the reconciler looks the job up by it).
 */
export function planJobs(deliveries: readonly PlannedDelivery[], maxPerJob: number): PlannedJob[] {
  const runs: PlannedDelivery[][] = [];
  const openRuns = new Map<string, PlannedDelivery[]>();
  for (const d of deliveries) {
    const key = `${targetKey(d)}\u0000${orderingKey({ webhookId: d.webhook.id, channelId: d.channelId, events: d.events })}`;
    const run = openRuns.get(key);
    if (run && run.length < maxPerJob) {
      run.push(d);
      continue;
    }
    const created = [d];
    openRuns.set(key, created);
    runs.push(created);
  }
  const jobs: PlannedJob[] = [];
  const openJobs = new Map<string, PlannedJob>();
  for (const run of runs) {
    const key = targetKey(run[0]!);
    const job = openJobs.get(key);
    if (job && job.deliveries.length + run.length <= maxPerJob) {
      job.deliveries.push(...run);
      continue;
    }
    const created: PlannedJob = { id: '', deliveries: [...run] };
    openJobs.set(key, created);
    jobs.push(created);
  }
  for (const job of jobs) {
    job.id = jobIdFor(job.deliveries.map((d) => d.id));
    for (const d of job.deliveries) d.jobId = job.deliveries.length > 1 ? job.id : null;
  }
  return jobs;
}

/** What the deliveries of one job share: the webhook and where and how it is called, and the owner. */
function targetKey(d: PlannedDelivery): string {
  const w = d.webhook;
  return [w.id, w.source, w.url, w.batch, w.reliable, d.organizationId, d.applicationId].join('\u0000');
}

/**
 * Turns matched events (in stream order) into deliveries (in the order of their first event).
 *
 * - A webhook without `batch` gets one delivery per event; its id is derived from
 *   `(webhook id, event id)`, so planning the same event again gives the same id (and the same
 *   BullMQ job id).
 * - A `batch` webhook gets one delivery per **moment**: the events of one application with the same
 *   `timestamp` (Unix ms, one per operation: its producer stamps every event of it alike) among the
 *   events planned together (read within the coalescing window `WEBHOOK_BATCH_WINDOW_MS` of the
 *   first one, at most `WEBHOOK_EVENT_BATCH_SIZE` events), in stream order, at most
 *   MAX_EVENTS_PER_BATCH per call. Its id is derived from the webhook id and every event id.
 */
export function planDeliveries(matched: readonly MatchedEvent[]): PlannedDelivery[] {
  const out: PlannedDelivery[] = [];
  const moments = new Map<string, PlannedDelivery>();
  for (const m of matched) {
    for (const webhook of m.webhooks) {
      if (!webhook.url) continue;
      const target = webhook as ResolvedWebhook & { url: string };
      if (!webhook.batch) {
        out.push({
          id: deliveryIdFor(`${webhook.id}\u0000${m.event.id}`),
          webhook: target,
          organizationId: m.organizationId,
          applicationId: m.applicationId,
          channelId: m.channelId,
          events: [m.event],
          order: m.seq,
        });
        continue;
      }
      const key = `${webhook.id}\u0000${m.applicationId}\u0000${m.event.timestamp}`;
      const open = moments.get(key);
      if (open && open.events.length < MAX_EVENTS_PER_BATCH) {
        open.events.push(m.event);
        continue;
      }
      const delivery: PlannedDelivery = {
        id: '',
        webhook: target,
        organizationId: m.organizationId,
        applicationId: m.applicationId,
        channelId: m.channelId,
        events: [m.event],
        order: m.seq,
      };
      moments.set(key, delivery);
      out.push(delivery);
    }
  }
  for (const d of out) {
    if (d.webhook.batch)
      d.id = deliveryIdFor(`${d.webhook.id}\u0000batch\u0000${d.events.map((e) => e.id).join('\u0000')}`);
  }
  return out;
}
