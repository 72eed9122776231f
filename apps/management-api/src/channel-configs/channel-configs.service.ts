import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DomainError, type ChannelConfigCreateBody, type ChannelConfigUpdateBody } from '@switchboard/contracts';
import type { ODataQuery } from '@switchboard/odata';
import type { DataSource, EntityManager } from 'typeorm';
import { ApplicationConfigParent } from '../application-configs/application-config-parent.js';
import { ApplicationEvents } from '../application-configs/application-events.js';
import type { Caller } from '../auth/caller.js';
import { CHANNEL_WEBHOOK_KIND } from '../channel-webhooks/channel-webhook.model.js';
import { nextState, type WriteMode } from '../common/bodies.js';
import { redactKeys, writeChanges } from '../common/change-log.js';
import { insertRecorded, type RecordedInsert } from '../common/recorded-insert.js';
import { conflictOnUnique } from '../common/db-errors.js';
import { RecordReader, type ListAnswer, type EntityValues } from '../common/record-reader.js';
import { WebhookTargets, withInlineWebhooks } from '../common/webhook-records.js';
import { ChannelConfigEntity } from './channel-config.entity.js';
import { CHANNEL_CONFIGS } from './channel-config.model.js';

type ChannelState = Pick<
  ChannelConfigEntity,
  | 'applicationConfigId'
  | 'channelIdPattern'
  | 'recordingEnabled'
  | 'default'
  | 'priority'
  | 'connectionStatsInterval'
  | 'bandwidthAdaptationPolicy'
  | 'codec'
  | 'sfu'
  | 'mcu'
  | 'rtmp'
  | 'recordingManagementOverride'
  | 'videoEncodings'
> &
  EntityValues;

/** What a PUT gives the fields it leaves out (`applicationConfigId` and `channelIdPattern` are kept). */
const DEFAULTS: Partial<ChannelState> = {
  recordingEnabled: null,
  default: false,
  priority: 0,
  connectionStatsInterval: null,
  bandwidthAdaptationPolicy: 'Enabled',
  codec: {},
  sfu: {},
  mcu: {},
  rtmp: {},
  recordingManagementOverride: {},
  videoEncodings: [],
};
const FIELDS = ['applicationConfigId', 'channelIdPattern', ...Object.keys(DEFAULTS)];
const REDACT = { rtmp: redactKeys('secretKey') };
const DEFAULT_CONFLICT = 'The application config already has a default channel config.';
const uniqueDefault = conflictOnUnique<never>({
  channel_config_one_default_idx: { field: 'default', message: DEFAULT_CONFLICT },
});

@Injectable()
export class ChannelConfigsService {
  readonly reader = new RecordReader(CHANNEL_CONFIGS);
  private readonly insert: RecordedInsert = {
    entity: ChannelConfigEntity,
    reader: this.reader,
    change: { entityType: 'ChannelConfig', properties: FIELDS, redact: REDACT },
    refused: uniqueDefault,
  };
  private readonly parents = new ApplicationConfigParent();

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly targets: WebhookTargets,
    private readonly events: ApplicationEvents,
  ) {}

  /**
   * With `applicationConfigId`, the channel configs of that application config (404 when it is not the organization's).
   */
  list(caller: Caller, query: ODataQuery, applicationConfigId?: string): Promise<ListAnswer> {
    return this.parents.listChildren(this.reader, this.ds, caller, query, applicationConfigId);
  }

  get(caller: Caller, id: string, query?: ODataQuery): Promise<EntityValues> {
    return this.reader.one(this.ds, caller, id, query);
  }

  async create(caller: Caller, body: Partial<ChannelConfigCreateBody>): Promise<EntityValues> {
    const { webhooks, ...fields } = body;
    const { record, applicationId } = await this.ds.transaction(async (m) => {
      const parent = await this.parents.named(m, caller, fields.applicationConfigId);
      const state = nextState(
        { ...(DEFAULTS as ChannelState), applicationConfigId: parent.id as string, channelIdPattern: '' },
        pick(fields),
        'merge',
        DEFAULTS,
      );
      state.applicationConfigId = parent.id as string;
      await this.checkDefault(m, state, null);
      const after = await insertRecorded(m, caller, this.insert, state);
      return {
        record: await withInlineWebhooks(m, caller, CHANNEL_WEBHOOK_KIND, after, webhooks, this.targets),
        applicationId: parent.applicationId as string,
      };
    });
    this.events.changed([applicationId]);
    return record;
  }

  async update(
    caller: Caller,
    id: string,
    body: Partial<ChannelConfigUpdateBody>,
    mode: WriteMode,
  ): Promise<EntityValues> {
    const { webhooks, ...fields } = body;
    const { record, applicationIds } = await this.ds.transaction(async (m) => {
      const before = await this.reader.lock(m, caller, id);
      const oldParent = await this.parents.of(m, caller, before);
      const current = Object.fromEntries(FIELDS.map((f) => [f, before[f]])) as ChannelState;
      const state = nextState(current, pick(fields), mode, DEFAULTS, ['applicationConfigId', 'channelIdPattern']);
      const parent =
        state.applicationConfigId === oldParent.id
          ? oldParent
          : await this.parents.named(m, caller, state.applicationConfigId);
      state.applicationConfigId = parent.id as string;
      await this.checkDefault(m, state, id);
      await m
        .getRepository(ChannelConfigEntity)
        .update(
          { id, organizationId: caller.organizationId },
          { ...state, modifiedOn: Date.now(), modifiedBy: caller.principal },
        )
        .catch(uniqueDefault);
      const after = await this.reader.one(m, caller, id);
      await writeChanges(m, caller, {
        entityType: 'ChannelConfig',
        entityId: id,
        type: 'Update',
        before,
        after,
        properties: FIELDS,
        redact: REDACT,
      });
      return {
        record: await withInlineWebhooks(m, caller, CHANNEL_WEBHOOK_KIND, after, webhooks, this.targets),
        applicationIds: [oldParent.applicationId as string, parent.applicationId as string],
      };
    });
    this.events.changed(applicationIds);
    return record;
  }

  /** One default per application config: a second one is a 409 (the unique index settles races). */
  private async checkDefault(m: EntityManager, state: ChannelState, id: string | null): Promise<void> {
    if (!state.default) return;
    const rows = (await m.query(
      'SELECT id FROM management.channel_config WHERE application_config_id = $1 AND is_default AND id IS DISTINCT FROM $2 LIMIT 1',
      [state.applicationConfigId, id],
    )) as unknown[];
    if (rows.length > 0)
      throw new DomainError('Conflict', DEFAULT_CONFLICT, [{ field: 'default', message: DEFAULT_CONFLICT }], 'default');
  }
}

function pick(fields: EntityValues): EntityValues {
  return Object.fromEntries(Object.entries(fields).filter(([k]) => FIELDS.includes(k)));
}
