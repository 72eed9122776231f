/**
 * The usage contract: what usage-aggregator reads from the domain event stream, what it stores,
 * and the one request it answers. The model (windows, participant minutes, tenancy, errors) is
 * in docs/usage-model.md.
 */

import { odataQueryErrorCodeOf } from '../problem/index.js';

/** Length of one usage bucket: a clock hour, in milliseconds. */
export const USAGE_BUCKET_MS = 3_600_000;

/** Largest timestamp a window may name: 9999-12-31T23:59:59.999Z. */
export const USAGE_MAX_TIMESTAMP = 253_402_300_799_999;

/** The event types usage-aggregator applies; every other event is acknowledged without effect. */
export const USAGE_EVENT_TYPES = [
  'connection.connected',
  'connection.updated',
  'connection.stats',
  'connection.closed',
  'connection.failed',
  'channel.client.left',
  'client.unregistered',
  'channel.client.message',
  'client.message',
] as const;

/** Prefix of the detail message of a refused OData option: `'<OData code>: <message>'`. */
export function usageQueryErrorCode(detailMessage: string): string | undefined {
  return odataQueryErrorCodeOf(detailMessage)?.code;
}
