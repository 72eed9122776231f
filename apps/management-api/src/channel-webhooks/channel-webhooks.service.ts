import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type ChannelWebhookCreateBody, type ChannelWebhookUpdateBody } from '@switchboard/contracts';
import type { ODataQuery } from '@switchboard/odata';
import type { DataSource, EntityManager } from 'typeorm';
import { ApplicationEvents } from '../application-configs/application-events.js';
import type { Caller } from '../auth/caller.js';
import { CHANNEL_CONFIGS } from '../channel-configs/channel-config.model.js';
import { invalid, type WriteMode } from '../common/bodies.js';
import { RecordReader, type ListAnswer, type EntityValues } from '../common/record-reader.js';
import { deleteWebhook, insertWebhook, updateWebhook, WebhookTargets } from '../common/webhook-records.js';
import { WebhookTests, type WebhookTestSent } from '../common/webhook-tests.js';
import { CHANNEL_WEBHOOK_KIND } from './channel-webhook.model.js';

interface Parent {
  id: string;
  applicationId: string;
}

@Injectable()
export class ChannelWebhooksService {
  readonly reader = CHANNEL_WEBHOOK_KIND.reader;
  private readonly parents = new RecordReader(CHANNEL_CONFIGS);

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly targets: WebhookTargets,
    private readonly events: ApplicationEvents,
    private readonly tests: WebhookTests,
  ) {}

  /** With `channelConfigId`, the webhooks of that channel config (404 when it is not the organization's). */
  list(caller: Caller, query: ODataQuery, channelConfigId?: string): Promise<ListAnswer> {
    return this.reader.listUnder(this.ds, caller, query, {
      reader: this.parents,
      id: channelConfigId,
      column: 'channel_config_id',
      param: 'channelConfigId',
    });
  }

  get(caller: Caller, id: string, query?: ODataQuery): Promise<EntityValues> {
    return this.reader.one(this.ds, caller, id, query);
  }

  async create(caller: Caller, body: Partial<ChannelWebhookCreateBody>): Promise<EntityValues> {
    const { record, applicationId } = await this.ds.transaction(async (m) => {
      const parent = await this.parent(m, caller, body.channelConfigId);
      const record = await insertWebhook(
        m,
        caller,
        CHANNEL_WEBHOOK_KIND,
        parent.id,
        body as EntityValues,
        this.targets,
      );
      return { record, applicationId: parent.applicationId };
    });
    this.events.changed([applicationId]);
    return record;
  }

  async update(
    caller: Caller,
    id: string,
    body: Partial<ChannelWebhookUpdateBody>,
    mode: WriteMode,
  ): Promise<EntityValues> {
    const { record, applicationIds } = await this.ds.transaction(async (m) => {
      const before = await this.reader.lock(m, caller, id);
      const oldParent = await this.parent(m, caller, before.channelConfigId as string);
      const parent =
        body.channelConfigId === undefined || body.channelConfigId === null
          ? oldParent
          : await this.parent(m, caller, body.channelConfigId);
      const record = await updateWebhook(
        m,
        caller,
        CHANNEL_WEBHOOK_KIND,
        before,
        body as EntityValues,
        mode,
        parent.id,
        this.targets,
      );
      return { record, applicationIds: [oldParent.applicationId, parent.applicationId] };
    });
    this.events.changed(applicationIds);
    return record;
  }

  /** Deletes the webhook: nothing more is delivered to it; its past deliveries stay in the log. */
  async remove(caller: Caller, id: string): Promise<void> {
    const applicationId = await this.ds.transaction(async (m) => {
      const before = await this.reader.lock(m, caller, id);
      const parent = await this.parent(m, caller, before.channelConfigId as string);
      await deleteWebhook(m, caller, CHANNEL_WEBHOOK_KIND, before);
      return parent.applicationId;
    });
    this.events.changed([applicationId]);
  }

  /** Sends a `webhook.test` event to this webhook (through webhook-worker: signed, logged). */
  async sendTest(caller: Caller, id: string): Promise<WebhookTestSent> {
    const webhook = await this.reader.one(this.ds, caller, id);
    const parent = await this.parent(this.ds.manager, caller, webhook.channelConfigId as string);
    return this.tests.send(caller, webhook, 'channel', parent.applicationId);
  }

  /** The channel config and the application id it belongs to; a 400 when it is not the organization's. */
  private async parent(m: EntityManager, caller: Caller, channelConfigId: string | null | undefined): Promise<Parent> {
    if (typeof channelConfigId !== 'string') throw invalid('channelConfigId', 'is required');
    const parent = await this.parents.find(m, caller, channelConfigId);
    if (!parent) throw invalid('channelConfigId', 'is not a channel config of the organization');
    const rows = (await m.query('SELECT application_id FROM management.application_config WHERE id = $1', [
      parent.applicationConfigId,
    ])) as Array<{ application_id: string }>;
    return { id: parent.id as string, applicationId: rows[0]?.application_id ?? '' };
  }
}
