import { Inject, Injectable } from '@nestjs/common';
import type { JsMsg } from '@nats-io/jetstream';
import { CHANGE_NOTICE_CONSUMER, changeNotice, ContractViolation, type ChangeNotice } from '@switchboard/contracts';
import {
  changeStreamOf,
  EventConsumerLoop,
  JsonLogger,
  Metrics,
  NatsClient,
  retryWhileDependencyDown,
  SERVICE_CONFIG,
} from '@switchboard/service-kit';
import { DataSource } from 'typeorm';
import { KnownOrganizations } from '../auth/known-organizations.js';
import type { ManagementConfig } from '../config.js';
import { ConsumerLifecycle, managementConsumerLoop } from '../common/management-consumer.js';
/**
 * Stores the change records other services announce about records they own (today: channel
 * recordings, from recording-service; contracts `changes.ts`). Reads the change notice stream
 * `<ns>-changes` with the durable pull consumer `management-api-changes` (service-kit's
 * EventConsumerLoop, which creates the stream when it does not exist yet) and inserts each
 * notice into `management.change_record` under the notice id: a redelivered notice is stored once
 * (`ON CONFLICT (id) DO NOTHING`). Acknowledged after the insert committed; a failure is handed
 * back with a growing delay, and parked after EVENT_MAX_ATTEMPTS deliveries; a malformed notice is
 * parked at once; one of an organization this deployment does not know is logged and dropped.
 */
@Injectable()
export class ChangeNoticeConsumer extends ConsumerLifecycle {
  protected readonly consumer: EventConsumerLoop;

  constructor(
    private readonly ds: DataSource,
    nats: NatsClient,
    private readonly organizations: KnownOrganizations,
    @Inject(SERVICE_CONFIG) config: ManagementConfig,
    private readonly logger: JsonLogger,
    metrics: Metrics,
  ) {
    super();
    this.consumer = managementConsumerLoop(
      { nats, config, logger, metrics },
      {
        name: CHANGE_NOTICE_CONSUMER,
        description: 'management-api: change records of records other services own',
        stream: changeStreamOf(config.natsNamespace),
      },
      (msg) => this.handle(msg),
    );
  }

  private async handle(msg: JsMsg): Promise<void> {
    let notice: ChangeNotice;
    try {
      notice = changeNotice.parse(msg.json<unknown>());
    } catch (e) {
      const reason = e instanceof ContractViolation ? e.message : 'the message is not JSON';
      await this.consumer.park(msg, `malformed change notice: ${reason}`);
      return;
    }
    // While PostgreSQL is down the notice stays in hand; any other failure is thrown: handed back
    // with a growing delay, parked after its attempts (EventConsumerLoop.handle).
    const stored = await retryWhileDependencyDown(() => this.store(notice), {
      stopping: () => this.consumer.stopped,
      keepAlive: () => msg.working(),
    });
    if (stored === 'unknown-organization') {
      this.logger.event('warn', 'change notice consumer: notice of an unknown organization dropped', {
        id: notice.id,
        organizationId: notice.organizationId,
        entityType: notice.entityType,
      });
    }
    msg.ack();
  }

  /**
   * Inserts the change record of `notice` unless one of its id exists; a notice of an organization not stored here is
   * skipped.
   */
  async store(notice: ChangeNotice): Promise<'stored' | 'duplicate' | 'unknown-organization'> {
    // A disabled organization's log still takes the changes made to its records.
    const organization = await this.organizations.resolve(notice.organizationId);
    if (!organization) return 'unknown-organization';
    const rows = (await this.ds.query(
      `INSERT INTO management.change_record (id, organization_id, type, entity_type, entity_id, property_name, old_value, new_value, changed_on, changed_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (id) DO NOTHING
       RETURNING id`,
      [
        notice.id,
        organization.id,
        notice.type,
        notice.entityType,
        notice.entityId,
        notice.propertyName,
        notice.oldValue,
        notice.newValue,
        notice.changedOn,
        notice.changedBy,
      ],
    )) as unknown[];
    return rows.length > 0 ? 'stored' : 'duplicate';
  }
}
