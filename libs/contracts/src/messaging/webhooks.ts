/**
 * The webhook contract between webhook-worker and management-api: TypeBox schemas and plain
 * functions only. Subjects, the deliveries entity set, tenancy and what the receiver gets are in
 * docs/webhooks-contract.md.
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  Int32,
  Int64,
  Nullable,
  StringEnum,
  StringList,
  Uuid,
  record,
  validatorsFor,
} from '../interface-a/record-schema.js';
import { ForwardedQueryOptions, type ODataListResponse } from '../interface-b/management-messaging.js';
import { CallerScope } from './subjects.js';

export const WebhookSubjects = {
  /** management-api answers: the webhooks an event of (application, channel) goes to. */
  resolve: 'management-api.v1.webhooks.resolve',
  /** webhook-worker answers: the delivery log as the `/WebhookDeliveries` entity set. */
  deliveriesList: 'webhook-worker.v1.deliveries.list',
  deliveriesGet: 'webhook-worker.v1.deliveries.get',
  deliveriesReplay: 'webhook-worker.v1.deliveries.replay',
} as const;

const Id = Type.String({ minLength: 1, maxLength: 256 });

// ---------------------------------------------------------------------------------------------
// management-api.v1.webhooks.resolve
// ---------------------------------------------------------------------------------------------

export const WEBHOOK_SOURCES = ['application', 'channel'] as const;
export const WebhookSource = StringEnum(WEBHOOK_SOURCES, {
  description: 'Whether the webhook belongs to the application config or to a channel config.',
});
export type WebhookSource = Static<typeof WebhookSource>;

export const WebhooksResolveRequest = record(
  'WebhooksResolveRequest',
  {
    applicationId: Id,
    channelId: Nullable(Id, { description: 'The channel the event happened in; null for events outside a channel.' }),
  },
  'Which webhooks an event of this application (and channel) goes to.',
);
export type WebhooksResolveRequest = Static<typeof WebhooksResolveRequest>;

/** Type of the event interface B's `SendTest` sends to one webhook (not in the catalog: nobody subscribes to it). */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

export const ResolvedWebhook = record(
  'ResolvedWebhook',
  {
    id: Type.String({ minLength: 1, description: 'Id of the application webhook or channel webhook record.' }),
    source: WebhookSource,
    url: Nullable(Type.String(), { description: 'Target URL; null: the webhook gets nothing.' }),
    events: Nullable(Type.Array(Type.String()), {
      description: 'Wanted event names; null, empty or containing `*`: all.',
    }),
    batch: Type.Boolean({ description: 'Events generated at the same moment go in one call as `{ "batch": [...] }`.' }),
    reliable: Type.Boolean({ description: 'Network error, timeout or 5xx: retried with backoff, 3 attempts in all.' }),
    disabled: Type.Boolean({ description: 'true: the webhook gets nothing.' }),
  },
  'A webhook as the worker needs it.',
);
export type ResolvedWebhook = Static<typeof ResolvedWebhook>;

export const WebhooksResolveResponse = record(
  'WebhooksResolveResponse',
  {
    organizationId: Type.String({ minLength: 1 }),
    sharedSecret: Type.String({ description: 'UTF-8 secret of the application; signs every delivery.' }),
    channelConfigId: Nullable(Type.String(), {
      description: 'The channel config that governs the channel (selectChannelConfig), if any.',
    }),
    webhooks: Type.Array(ResolvedWebhook, {
      description: 'Application webhooks first, then the webhooks of the governing channel config.',
    }),
  },
  'The webhooks of an application and of the channel config governing one of its channels.',
);
export type WebhooksResolveResponse = Static<typeof WebhooksResolveResponse>;

/** What `selectChannelConfig` needs of a channel config (interface B `ChannelConfig` has it all). */
export interface ChannelConfigSelection {
  id?: string | null;
  channelIdPattern: string;
  priority: number | null;
  default: boolean | null;
}

/** The pattern that matches every channel. */
export const ANY_CHANNEL_PATTERN = '*';

/** Whether a channel config with `pattern` applies to the channel `channelId`: equal ids, or `*`. */
export function channelPatternMatches(pattern: string, channelId: string): boolean {
  return pattern === ANY_CHANNEL_PATTERN || pattern === channelId;
}

/**
 * The channel config that governs `channelId` (http-contract.md, "Webhooks"): among the configs whose
 * `channelIdPattern` is `channelId` or `*`, the highest `priority` wins; on a tie the specific pattern
 * wins over `*`; then the one marked `default`; then (to stay deterministic) the smallest `id`, then
 * the earliest in `configs`. A `default` config whose pattern does not match does not apply. Null
 * when `channelId` is null (an event outside any channel) or nothing matches. A missing priority
 * counts as 0.
 */
export function selectChannelConfig<T extends ChannelConfigSelection>(
  configs: readonly T[],
  channelId: string | null,
): T | null {
  if (channelId === null) return null;
  let best: T | null = null;
  let bestIndex = -1;
  configs.forEach((config, index) => {
    if (!channelPatternMatches(config.channelIdPattern, channelId)) return;
    if (best === null || compareChannelConfigs(config, index, best, bestIndex) < 0) {
      best = config;
      bestIndex = index;
    }
  });
  return best;
}

/** Negative when `a` governs before `b` (see selectChannelConfig). */
function compareChannelConfigs(a: ChannelConfigSelection, ai: number, b: ChannelConfigSelection, bi: number): number {
  const pa = a.priority ?? 0;
  const pb = b.priority ?? 0;
  if (pa !== pb) return pb - pa;
  const sa = a.channelIdPattern === ANY_CHANNEL_PATTERN ? 1 : 0;
  const sb = b.channelIdPattern === ANY_CHANNEL_PATTERN ? 1 : 0;
  if (sa !== sb) return sa - sb;
  const da = a.default === true ? 0 : 1;
  const db = b.default === true ? 0 : 1;
  if (da !== db) return da - db;
  const ia = a.id ?? null;
  const ib = b.id ?? null;
  if (ia !== ib) {
    if (ia === null) return 1;
    if (ib === null) return -1;
    return ia < ib ? -1 : 1;
  }
  return ai - bi;
}

// ---------------------------------------------------------------------------------------------
// The /WebhookDeliveries entity set
// ---------------------------------------------------------------------------------------------

export const WebhookDelivery = record(
  'WebhookDelivery',
  {
    id: Uuid({ description: 'Id of this attempt (the entity key).' }),
    deliveryId: Uuid({
      description: 'The delivery this attempt belongs to: the `webhook-id` header, the same on every retry.',
    }),
    webhookId: Type.String({ description: 'Id of the application webhook or channel webhook.' }),
    webhookSource: WebhookSource,
    organizationId: Type.String(),
    applicationId: Type.String(),
    channelId: Nullable(Type.String(), { description: 'Channel of the (first) event; null outside a channel.' }),
    eventId: Type.String({ description: 'Id of the (first) event delivered.' }),
    eventType: Type.String({ description: 'Type of the (first) event delivered.' }),
    eventIds: StringList({ description: 'Every event of the delivery (more than one for a batch webhook).' }),
    eventCount: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
    batch: Type.Boolean({ description: 'Delivered as `{ "batch": [...] }`.' }),
    url: Type.String({ description: 'The URL the attempt went to.' }),
    attempt: Int32({ minimum: 1, description: 'Attempt number within the delivery, from 1.' }),
    statusCode: Nullable(Int32(), {
      description: 'HTTP status answered; null when no answer came (network error, timeout, refused target).',
    }),
    error: Nullable(Type.String(), { description: 'Why the attempt failed; null on success.' }),
    success: Type.Boolean({ description: 'The receiver answered 2xx.' }),
    final: Type.Boolean({
      description: 'The last attempt of its delivery: a success, a failure not retried, or the last retry.',
    }),
    durationMs: Int32({ minimum: 0, description: 'From the start of the attempt to the end of the answer.' }),
    attemptedOn: Int64({ description: 'When the attempt started, Unix ms.' }),
    replayOf: Nullable(Uuid(), { description: 'The failed delivery this delivery replays, if it is a replay.' }),
  },
  'One attempt to deliver a webhook (the `/WebhookDeliveries` entity set).',
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookDeliveriesListRequest = record(
  'WebhookDeliveriesListRequest',
  { scope: CallerScope, query: ForwardedQueryOptions },
  'List delivery attempts (GET /WebhookDeliveries).',
);
export type WebhookDeliveriesListRequest = Static<typeof WebhookDeliveriesListRequest>;

export const WebhookDeliveryGetRequest = record(
  'WebhookDeliveryGetRequest',
  { scope: CallerScope, id: Uuid(), query: Type.Optional(ForwardedQueryOptions) },
  'Read one delivery attempt (GET /WebhookDeliveries/{id}); only `$select` and `$expand` apply.',
);
export type WebhookDeliveryGetRequest = Static<typeof WebhookDeliveryGetRequest>;

export const WebhookDeliveryReplayRequest = record(
  'WebhookDeliveryReplayRequest',
  { scope: CallerScope, id: Uuid({ description: 'Id of any attempt of the failed delivery.' }) },
  'Replay a failed delivery (POST /WebhookDeliveries/{id}/Replay).',
);
export type WebhookDeliveryReplayRequest = Static<typeof WebhookDeliveryReplayRequest>;

export const WebhookDeliveryReplayResult = record(
  'WebhookDeliveryReplayResult',
  {
    deliveryId: Uuid({ description: 'The new delivery (its `webhook-id`).' }),
    replayOf: Uuid({ description: 'The failed delivery it replays.' }),
  },
  'A replay was queued.',
);
export type WebhookDeliveryReplayResult = Static<typeof WebhookDeliveryReplayResult>;

export const WebhookMessagingSchemas = {
  WebhooksResolveRequest,
  ResolvedWebhook,
  WebhooksResolveResponse,
  WebhookDelivery,
  WebhookDeliveriesListRequest,
  WebhookDeliveryGetRequest,
  WebhookDeliveryReplayRequest,
  WebhookDeliveryReplayResult,
} as const;

export const WebhookMessagingValidators = validatorsFor(WebhookMessagingSchemas);

export interface WebhookRequestMap {
  'management-api.v1.webhooks.resolve': { request: WebhooksResolveRequest; response: WebhooksResolveResponse };
  'webhook-worker.v1.deliveries.list': {
    request: WebhookDeliveriesListRequest;
    response: ODataListResponse<WebhookDelivery>;
  };
  'webhook-worker.v1.deliveries.get': { request: WebhookDeliveryGetRequest; response: Partial<WebhookDelivery> };
  'webhook-worker.v1.deliveries.replay': {
    request: WebhookDeliveryReplayRequest;
    response: WebhookDeliveryReplayResult;
  };
}

declare module './subjects.js' {
  // Declaration merging: the subjects above join the typed request map.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface RequestMap extends WebhookRequestMap {}
}
