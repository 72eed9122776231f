/**
 * The webhook contract between webhook-worker and management-api (http-contract.md "Webhooks",
 * service-spec.md section 6). Framework-free: TypeBox schemas (runtime validation) and plain
 * functions only.
 *
 * ## `management-api.v1.webhooks.resolve` (request/reply, answered by management-api)
 *
 * Request  `WebhooksResolveRequest`  `{ applicationId, channelId }` (`channelId` null for events
 *          that happen outside a channel: `client.registered`, `client.message` without channel...).
 * Response `WebhooksResolveResponse` `{ organizationId, sharedSecret, channelConfigId, webhooks }`:
 *   - `organizationId`, `sharedSecret`: of the application config whose `applicationId` this is
 *     (`sharedSecret` is the UTF-8 string that signs deliveries; never null: an application config
 *     without one answers `''`).
 *   - `webhooks`: every webhook of that application config (`source: 'application'`), then the
 *     webhooks of the ONE channel config that governs `channelId` (`source: 'channel'`), chosen with
 *     `selectChannelConfig` below (exported so that management-api applies the very same rule);
 *     none when `channelId` is null or no channel config matches. Disabled webhooks may be listed
 *     (`disabled: true`) or left out; the worker never delivers to them, nor to a webhook whose
 *     `url` is null.
 *   - `channelConfigId`: the id of the governing channel config, or null (for logs).
 *   - An application whose config is itself disabled answers `webhooks: []`.
 *   - An unknown application id answers the WireError `NotFound`: the worker then delivers the
 *     event to nobody (and does not retry). `Unavailable`/`Timeout` (management-api down): the
 *     worker does not acknowledge the event and tries again later, so nothing is lost.
 *   The worker caches an answer per `(applicationId, channelId)` for at most
 *   `WEBHOOK_CONFIG_CACHE_MS` (default 2 s) and drops every entry of an application when it sees
 *   `management-api.v1.applications.changed` for it.
 *
 * ## `management-api.v1.applications.changed` (core NATS publish; see interface-b/management-messaging.ts)
 *
 * Packet `{ pattern: 'management-api.v1.applications.changed', data: { applicationId } }` (a bare
 * `{ applicationId }` is accepted too). Every webhook-worker replica subscribes without a queue
 * group and drops its cached resolutions of that application, so a configuration change applies
 * to the next event (and at the latest after the cache time if the publish is lost).
 *
 * ## The `/WebhookDeliveries` entity set (answered by webhook-worker, queue group `webhook-worker`)
 *
 * One `WebhookDelivery` entity is ONE ATTEMPT to deliver: every attempt is logged, retries of a
 * reliable webhook are further entities with the same `deliveryId` and a higher `attempt`. The
 * `deliveryId` is the Standard Webhooks `webhook-id` header the receiver saw (stable across the
 * retries of one delivery). A delivery carries one event, or several for a `batch` webhook
 * (`eventId`/`eventType` are those of the first event; `eventIds` lists all, `eventCount` counts them).
 *
 * Suggested routes on management-api (interface B): GET `/WebhookDeliveries` (list, OData options),
 * GET `/WebhookDeliveries/{id}` (`$select` and `$expand`), POST `/WebhookDeliveries/{id}/Replay`.
 *
 * - `webhook-worker.v1.deliveries.list`   `WebhookDeliveriesListRequest` `{ scope, query }` ->
 *   `ODataListResponse<WebhookDelivery>` `{ value, '@odata.count'? }`. `query` holds the client's
 *   OData options verbatim (`$filter $orderby $top $skip $count $select $expand`), checked by
 *   management-api for grammar and limits (`checkForwardedQuery`) and bound here to the entity
 *   model with `@switchboard/odata` (`parseForwardedQuery`). The entity has no navigation property:
 *   any `$expand` name is `UnknownProperty`, `$expand=*` expands nothing. With no `$orderby` the
 *   newest attempts come first (`attemptedOn desc`, then `id`). A query error answers
 *   `{ code: 'ValidationFailed', message, details: [{ field: <option>, message: '<OData code>: <message>' }] }`
 *   (the OData code, e.g. `UnknownProperty`, starts the detail message, as on the other forwarded reads).
 * - `webhook-worker.v1.deliveries.get`    `WebhookDeliveryGetRequest` `{ scope, id, query }` ->
 *   `WebhookDelivery` (projected by `query.$select`; `$expand` bound as on the list), or `NotFound`.
 * - `webhook-worker.v1.deliveries.replay` `WebhookDeliveryReplayRequest` `{ scope, id }` (the id of
 *   any attempt of the delivery) -> `WebhookDeliveryReplayResult` `{ deliveryId, replayOf }`: a NEW
 *   delivery (new `webhook-id`, attempt series from 1, the same event payload) to the webhook's
 *   current URL and `reliable` flag (the logged ones when the webhook no longer exists), queued
 *   now. Only a failed delivery (its last attempt was final and unsuccessful) can be replayed:
 *   otherwise `Conflict`. Unknown id: `NotFound`.
 *
 * Tenancy: `scope.operator` sees every organization; any other caller only attempts whose
 * `organizationId` equals `scope.organizationId` (another organization's attempt answers
 * `NotFound`, exactly like a missing one; a caller without organization sees nothing).
 *
 * ## What the receiver gets (http-contract.md "Webhooks")
 *
 * POST, `Content-Type: application/json`, body one `EventInfo`, or `{ "batch": [EventInfo, ...] }`
 * for a `batch` webhook (always that shape for such a webhook, also with one event). Headers:
 * `X-ApplicationSignature` = Base64(HMAC-SHA256(raw body, UTF-8 sharedSecret)); `webhook-id` =
 * `deliveryId`; `webhook-timestamp` = Unix seconds of the attempt; `webhook-signature` =
 * `v1,` + Base64(HMAC-SHA256(`${webhook-id}.${webhook-timestamp}.${raw body}`, UTF-8 sharedSecret)),
 * which any Standard Webhooks verifier accepts given the secret `whsec_` + Base64(UTF-8 sharedSecret).
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
} from '../interface-a/schema-kit.js';
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
