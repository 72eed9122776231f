import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { SDK_DOWNLOAD_DATE_FIELDS, type UserAccountUpdateBody } from '@switchboard/contracts';
import type { ODataQuery } from '@switchboard/odata';
import type { DataSource } from 'typeorm';
import type { Caller } from '../auth/caller.js';
import type { WriteMode } from '../common/bodies.js';
import { RecordReader, type ListAnswer, type EntityValues } from '../common/record-reader.js';
import { updateWritableFields } from '../common/writable-fields.js';
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

  update(caller: Caller, id: string, body: Partial<UserAccountUpdateBody>, mode: WriteMode): Promise<EntityValues> {
    const set = { reader: this.reader, entity: UserAccountEntity, entityType: 'UserAccount', defaults: DEFAULTS };
    return this.ds.transaction((manager) => updateWritableFields(manager, set, caller, id, body, mode));
  }
}
