import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type ApplicationWebhookCreateBody, type ApplicationWebhookUpdateBody } from '@switchboard/contracts';
import type { ODataQuery } from '@switchboard/odata';
import type { DataSource } from 'typeorm';
import { ApplicationConfigParent } from '../application-configs/application-config-parent.js';
import { ApplicationEvents } from '../application-configs/application-events.js';
import type { Caller } from '../auth/caller.js';
import type { WriteMode } from '../common/bodies.js';
import type { ListAnswer, EntityValues } from '../common/record-reader.js';
import { deleteWebhook, insertWebhook, updateWebhook, WebhookTargets } from '../common/webhook-records.js';
import { WebhookTests, type WebhookTestSent } from '../common/webhook-tests.js';
import { APPLICATION_WEBHOOK_KIND } from './application-webhook.model.js';

@Injectable()
export class ApplicationWebhooksService {
  readonly reader = APPLICATION_WEBHOOK_KIND.reader;
  private readonly parents = new ApplicationConfigParent();

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly targets: WebhookTargets,
    private readonly events: ApplicationEvents,
    private readonly tests: WebhookTests,
  ) {}

  /** With `applicationConfigId`, the webhooks of that config (404 when it is not the organization's). */
  list(caller: Caller, query: ODataQuery, applicationConfigId?: string): Promise<ListAnswer> {
    return this.parents.listChildren(this.reader, this.ds, caller, query, applicationConfigId);
  }

  get(caller: Caller, id: string, query?: ODataQuery): Promise<EntityValues> {
    return this.reader.one(this.ds, caller, id, query);
  }

  async create(caller: Caller, body: Partial<ApplicationWebhookCreateBody>): Promise<EntityValues> {
    const { record, applicationId } = await this.ds.transaction(async (m) => {
      const parent = await this.parents.named(m, caller, body.applicationConfigId);
      const record = await insertWebhook(
        m,
        caller,
        APPLICATION_WEBHOOK_KIND,
        parent.id as string,
        body as EntityValues,
        this.targets,
      );
      return { record, applicationId: parent.applicationId as string };
    });
    this.events.changed([applicationId]);
    return record;
  }

  async update(
    caller: Caller,
    id: string,
    body: Partial<ApplicationWebhookUpdateBody>,
    mode: WriteMode,
  ): Promise<EntityValues> {
    const { record, applicationIds } = await this.ds.transaction(async (m) => {
      const before = await this.reader.lock(m, caller, id);
      const oldParent = await this.parents.of(m, caller, before);
      const parent =
        body.applicationConfigId === undefined || body.applicationConfigId === null
          ? oldParent
          : await this.parents.named(m, caller, body.applicationConfigId);
      const record = await updateWebhook(
        m,
        caller,
        APPLICATION_WEBHOOK_KIND,
        before,
        body as EntityValues,
        mode,
        parent.id as string,
        this.targets,
      );
      return { record, applicationIds: [oldParent.applicationId as string, parent.applicationId as string] };
    });
    this.events.changed(applicationIds);
    return record;
  }

  /** Deletes the webhook: nothing more is delivered to it; its past deliveries stay in the log. */
  async remove(caller: Caller, id: string): Promise<void> {
    const applicationId = await this.ds.transaction(async (m) => {
      const before = await this.reader.lock(m, caller, id);
      const parent = await this.parents.of(m, caller, before);
      await deleteWebhook(m, caller, APPLICATION_WEBHOOK_KIND, before);
      return parent.applicationId as string;
    });
    this.events.changed([applicationId]);
  }

  /** Sends a `webhook.test` event to this webhook (through webhook-worker: signed, logged). */
  async sendTest(caller: Caller, id: string): Promise<WebhookTestSent> {
    const webhook = await this.reader.one(this.ds, caller, id);
    const parent = await this.parents.of(this.ds.manager, caller, webhook);
    return this.tests.send(caller, webhook, 'application', parent.applicationId as string);
  }
}
