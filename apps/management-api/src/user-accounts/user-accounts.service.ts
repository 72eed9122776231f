import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { SDK_DOWNLOAD_DATE_FIELDS, type UserAccountUpdateBody } from '@switchboard/contracts';
import type { ODataQuery } from '@switchboard/odata';
import type { DataSource } from 'typeorm';
import type { Caller } from '../auth/caller.js';
import { nextState, type WriteMode } from '../common/bodies.js';
import { writeChanges } from '../common/change-log.js';
import { RecordReader, type ListAnswer, type EntityValues } from '../common/record-reader.js';
import { UserAccountEntity } from './user-account.entity.js';
import { USER_ACCOUNTS } from './user-account.model.js';

const DEFAULTS: EntityValues = {
  svcAppCreated: false,
  svcChannelCreated: false,
  svcConnectionCreated: false,
  ...Object.fromEntries(SDK_DOWNLOAD_DATE_FIELDS.map((f) => [f, 0])),
  firstName: null,
  lastName: null,
  username: null,
  nickname: null,
  emailAddress: null,
  phoneNumber: null,
  pictureUrl: null,
  role: null,
};
const FIELDS = Object.keys(DEFAULTS);

/**
 * User accounts are read and updated here; they come from the identity provider (with their
 * identities), so there is no create operation and `identities` is not writable.
 */
@Injectable()
export class UserAccountsService {
  readonly reader = new RecordReader(USER_ACCOUNTS);

  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  list(caller: Caller, query: ODataQuery): Promise<ListAnswer> {
    return this.reader.list(this.ds, caller, query);
  }

  get(caller: Caller, id: string, query?: ODataQuery): Promise<EntityValues> {
    return this.reader.one(this.ds, caller, id, query);
  }

  async update(
    caller: Caller,
    id: string,
    body: Partial<UserAccountUpdateBody>,
    mode: WriteMode,
  ): Promise<EntityValues> {
    return this.ds.transaction(async (m) => {
      const before = await this.reader.lock(m, caller, id);
      const current = Object.fromEntries(FIELDS.map((f) => [f, before[f]]));
      const state = nextState(
        current,
        Object.fromEntries(Object.entries(body).filter(([k]) => FIELDS.includes(k))),
        mode,
        DEFAULTS,
      );
      await m
        .getRepository(UserAccountEntity)
        .update(
          { id, organizationId: caller.organizationId },
          { ...(state as Partial<UserAccountEntity>), modifiedOn: Date.now(), modifiedBy: caller.principal },
        );
      const after = await this.reader.one(m, caller, id);
      await writeChanges(m, caller, {
        entityType: 'UserAccount',
        entityId: id,
        type: 'Update',
        before,
        after,
        properties: FIELDS,
      });
      return after;
    });
  }
}
