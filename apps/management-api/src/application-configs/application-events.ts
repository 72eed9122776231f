import { Injectable, Logger } from '@nestjs/common';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { RuntimeSubjects, type ApplicationChangedEvent, type OrganizationChangedEvent } from '@switchboard/contracts';
import { CORRELATION_HEADER, currentCorrelationId, NatsClient } from '@switchboard/service-kit';
import { randomUUID } from 'node:crypto';

/**
 * Publishes `management-api.v1.applications.changed` (core NATS, namespaced, no reply) after a
 * change under an application config committed, so that services caching the resolved application
 * (shared secret, owner, webhooks, channel configs) drop it. The packet has the shape of every
 * message of this project: `{ pattern, data: { applicationId } }`.
 *
 * Fire and forget: the change is committed whatever happens here; while NATS is down the publish
 * waits for the reconnection (the client buffers), and a failure is logged.
 */
@Injectable()
export class ApplicationEvents {
  private readonly logger = new Logger('ApplicationEvents');

  constructor(private readonly nats: NatsClient) {}

  changed(applicationIds: Iterable<string | null | undefined>): void {
    for (const applicationId of new Set(applicationIds)) {
      if (applicationId) void this.publish(RuntimeSubjects.applicationChanged, { applicationId });
    }
  }

  /** `management-api.v1.organizations.changed`: the organization was disabled or enabled (same delivery as above). */
  organizationChanged(organizationId: string): void {
    void this.publish(RuntimeSubjects.organizationChanged, { organizationId });
  }

  private async publish(subject: string, event: ApplicationChangedEvent | OrganizationChangedEvent): Promise<void> {
    try {
      const nc = await this.nats.connection$();
      const h = natsHeaders();
      h.set(CORRELATION_HEADER, currentCorrelationId() ?? randomUUID());
      nc.publish(this.nats.subject(subject), JSON.stringify({ pattern: subject, data: event }), { headers: h });
    } catch (e) {
      this.logger.warn(`could not publish ${subject} for ${JSON.stringify(event)}: ${(e as Error).message}`);
    }
  }
}
