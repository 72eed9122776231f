import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  DomainError,
  type ApplicationConfigCreateBody,
  type ApplicationConfigUpdateBody,
  type ResolvedApplication,
} from '@switchboard/contracts';
import type { ODataQuery } from '@switchboard/odata';
import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { APPLICATION_WEBHOOK_KIND } from '../application-webhooks/application-webhook.model.js';
import type { Caller } from '../auth/caller.js';
import { invalid, nextState, type WriteMode } from '../common/bodies.js';
import { redactAlways, writeChanges } from '../common/change-log.js';
import { insertRecorded, type RecordedInsert } from '../common/recorded-insert.js';
import { conflictOnUnique } from '../common/db-errors.js';
import { RecordReader, type ListAnswer, type EntityValues } from '../common/record-reader.js';
import { WebhookTargets, withInlineWebhooks } from '../common/webhook-records.js';
import { ApplicationConfigEntity } from './application-config.entity.js';
import { APPLICATION_CONFIGS } from './application-config.model.js';
import { ApplicationEvents } from './application-events.js';

/** Application ids appear in URLs, subjects and keys: 1 to 128 URL-safe characters. */
export const APPLICATION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._~-]{0,127}$/;
const SECRET_MIN = 8;
const SECRET_MAX = 1024;

/** A new shared secret: 32 random bytes, hex. */
export function newSharedSecret(): string {
  return randomBytes(32).toString('hex');
}

interface AppState extends EntityValues {
  applicationId: string;
  disabled: boolean | null;
  tag: string | null;
  sharedSecret: string;
}

const TRACKED = ['applicationId', 'disabled', 'tag', 'sharedSecret'];
const REDACT = { sharedSecret: redactAlways };
const uniqueApplicationId = conflictOnUnique<never>({
  application_config_application_id_key: {
    field: 'applicationId',
    message: 'Another application config has this applicationId.',
  },
});

@Injectable()
export class ApplicationConfigsService {
  readonly reader = new RecordReader(APPLICATION_CONFIGS);
  private readonly insert: RecordedInsert = {
    entity: ApplicationConfigEntity,
    reader: this.reader,
    change: { entityType: 'ApplicationConfig', properties: TRACKED, redact: REDACT },
    refused: uniqueApplicationId,
  };

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly targets: WebhookTargets,
    private readonly events: ApplicationEvents,
  ) {}

  list(caller: Caller, query: ODataQuery): Promise<ListAnswer> {
    return this.reader.list(this.ds, caller, query);
  }

  get(caller: Caller, id: string, query?: ODataQuery): Promise<EntityValues> {
    return this.reader.one(this.ds, caller, id, query);
  }

  /** The full record of the caller's application config `id`, or NotFound. */
  find(caller: Caller, id: string): Promise<EntityValues> {
    return this.reader.one(this.ds, caller, id);
  }

  async create(caller: Caller, body: Partial<ApplicationConfigCreateBody>): Promise<EntityValues> {
    if (body.applicationId === undefined || body.applicationId === null) throw invalid('applicationId', 'is required');
    const state: AppState = {
      applicationId: body.applicationId,
      disabled: body.disabled === undefined ? false : body.disabled,
      tag: body.tag ?? null,
      sharedSecret: body.sharedSecret ?? newSharedSecret(),
    };
    check(state);
    const record = await this.ds.transaction(async (m) => {
      const after = await insertRecorded(m, caller, this.insert, state);
      return withInlineWebhooks(m, caller, APPLICATION_WEBHOOK_KIND, after, body.webhooks, this.targets);
    });
    this.events.changed([state.applicationId]);
    return record;
  }

  async update(
    caller: Caller,
    id: string,
    body: Partial<ApplicationConfigUpdateBody>,
    mode: WriteMode,
  ): Promise<EntityValues> {
    const { before, after } = await this.ds.transaction(async (m) => {
      const before = await this.reader.lock(m, caller, id);
      const current: AppState = {
        applicationId: before.applicationId as string,
        disabled: before.disabled as boolean | null,
        tag: before.tag as string | null,
        sharedSecret: before.sharedSecret as string,
      };
      const { webhooks, ...fields } = body;
      const state = nextState(current, fields as EntityValues, mode, { disabled: false, tag: null }, [
        'applicationId',
        'sharedSecret',
      ]);
      check(state);
      await m
        .getRepository(ApplicationConfigEntity)
        .update(
          { id, organizationId: caller.organizationId },
          { ...state, modifiedOn: Date.now(), modifiedBy: caller.principal },
        )
        .catch(uniqueApplicationId);
      const after = await this.reader.one(m, caller, id);
      await writeChanges(m, caller, {
        entityType: 'ApplicationConfig',
        entityId: id,
        type: 'Update',
        before,
        after,
        properties: TRACKED,
        redact: REDACT,
      });
      return {
        before,
        after: await withInlineWebhooks(m, caller, APPLICATION_WEBHOOK_KIND, after, webhooks, this.targets),
      };
    });
    this.events.changed([before.applicationId as string, after.applicationId as string]);
    return after;
  }

  /** `management-api.v1.applications.resolve`: internal, across organizations. */
  async resolve(applicationId: string): Promise<ResolvedApplication> {
    const row =
      typeof applicationId === 'string' && APPLICATION_ID_PATTERN.test(applicationId)
        ? await this.ds.getRepository(ApplicationConfigEntity).findOne({ where: { applicationId } })
        : null;
    if (!row) throw new DomainError('NotFound', `No application '${String(applicationId).slice(0, 128)}'.`);
    const organization = (await this.ds.query('SELECT disabled FROM management.organization WHERE id = $1', [
      row.organizationId,
    ])) as Array<{ disabled: boolean }>;
    const organizationDisabled = organization[0]?.disabled === true;
    return {
      applicationId: row.applicationId,
      applicationConfigId: row.id,
      organizationId: row.organizationId,
      sharedSecret: row.sharedSecret,
      disabled: row.disabled === true,
      organizationDisabled,
    };
  }
}

function check(state: AppState): void {
  if (!APPLICATION_ID_PATTERN.test(state.applicationId))
    throw invalid(
      'applicationId',
      'must be 1 to 128 characters: letters, digits, `.`, `_`, `~`, `-`, starting with a letter or digit',
    );
  if (state.sharedSecret.length < SECRET_MIN || state.sharedSecret.length > SECRET_MAX) {
    throw invalid(
      'sharedSecret',
      `must be ${SECRET_MIN} to ${SECRET_MAX} characters (leave it out to have one generated)`,
    );
  }
}
