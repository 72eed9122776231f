import type { Subscription } from '@nats-io/transport-node';
import { RuntimeSubjects } from '@switchboard/contracts';
import type { ReadinessService } from './health.js';
import type { JsonLogger } from './logger.js';
import type { NatsClient } from './nats.js';

const decoder = new TextDecoder();

/**
 * The id under `field` in a change notice: Nest's packet (`{ pattern, data: { <field> } }`) or the bare data; undefined
 * when unreadable.
 */
function changedId(data: Uint8Array | string, field: 'applicationId' | 'organizationId'): string | undefined {
  try {
    const parsed = JSON.parse(typeof data === 'string' ? data : decoder.decode(data)) as Record<string, unknown> & {
      data?: Record<string, unknown>;
    };
    const id = parsed?.data?.[field] ?? parsed?.[field];
    return typeof id === 'string' && id.length > 0 ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The application id a `management-api.v1.applications.changed` message names. */
export function changedApplicationId(data: Uint8Array | string): string | undefined {
  return changedId(data, 'applicationId');
}

/** The organization id a `management-api.v1.organizations.changed` message names. */
export function changedOrganizationId(data: Uint8Array | string): string | undefined {
  return changedId(data, 'organizationId');
}

export interface ApplicationChangesWatch {
  /** Resolves once the subscription is active. */
  readonly subscribed: Promise<void>;
  stop(): void;
}

/**
 * Calls `onChanged` with the application id of every `management-api.v1.applications.changed`
 * (core NATS, no queue group: every replica drops its own caches). With `readiness`, the
 * service is not ready until it is subscribed (a cache that misses changes would serve stale
 * configuration).
 */
export function watchApplicationChanges(
  nats: NatsClient,
  onChanged: (applicationId: string) => void,
  opts: { readiness?: ReadinessService; logger?: JsonLogger } = {},
): ApplicationChangesWatch {
  return watchChangeNotices(nats, RuntimeSubjects.applicationChanged, changedApplicationId, onChanged, {
    ...opts,
    check: 'application-changes',
  });
}

/**
 * Calls `onChanged` with the organization id of every `management-api.v1.organizations.changed`
 * (an organization created, disabled or enabled): replicas caching API key verdicts drop that
 * organization's. Every replica receives it (no queue group); readiness as for application changes.
 */
export function watchOrganizationChanges(
  nats: NatsClient,
  onChanged: (organizationId: string) => void,
  opts: { readiness?: ReadinessService; logger?: JsonLogger } = {},
): ApplicationChangesWatch {
  return watchChangeNotices(nats, RuntimeSubjects.organizationChanged, changedOrganizationId, onChanged, {
    ...opts,
    check: 'organization-changes',
  });
}

function watchChangeNotices(
  nats: NatsClient,
  subject: string,
  read: (data: Uint8Array) => string | undefined,
  onChanged: (id: string) => void,
  opts: { readiness?: ReadinessService; logger?: JsonLogger; check: string },
): ApplicationChangesWatch {
  let subscription: Subscription | undefined;
  let stopped = false;
  const subscribed = nats.connection$().then((nc) => {
    if (stopped) return;
    subscription = nc.subscribe(nats.subject(subject), {
      callback: (err, msg) => {
        if (err) return;
        const id = read(msg.data);
        if (id) onChanged(id);
        else opts.logger?.event('warn', `unreadable ${subject} event`);
      },
    });
  });
  subscribed.catch(() => undefined);
  opts.readiness?.register(opts.check, async () => {
    await subscribed;
    if (!subscription || subscription.isClosed()) throw new Error(`not subscribed to ${subject}`);
  });
  return {
    subscribed,
    stop() {
      stopped = true;
      subscription?.unsubscribe();
    },
  };
}
