import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { isUuid, type OrganizationUpdateBody } from '@switchboard/contracts';
import type { ODataQuery } from '@switchboard/odata';
import type { DataSource } from 'typeorm';
import type { Caller } from '../auth/caller.js';
import { invalid, nextState, type WriteMode } from '../common/bodies.js';
import { writeChanges } from '../common/change-log.js';
import { RecordReader, type ListAnswer, type Rec } from '../common/record-reader.js';
import { OrganizationEntity } from './organization.entity.js';
import { ORGANIZATIONS } from './organization.model.js';

const DEFAULTS: Rec = { name: null, paymentMethodId: null, vatNumber: null, industry: null, address: {}, primaryContact: {}, additionalContacts: null };
const FIELDS = Object.keys(DEFAULTS);

/** The caller's own organization: listed, read and updated; never another one (404). */
@Injectable()
export class OrganizationsService {
  readonly reader = new RecordReader(ORGANIZATIONS);

  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  list(caller: Caller, query: ODataQuery): Promise<ListAnswer> {
    return this.reader.list(this.ds, caller, query);
  }

  get(caller: Caller, id: string, query?: ODataQuery): Promise<Rec> {
    return this.reader.one(this.ds, caller, id, query);
  }

  async update(caller: Caller, id: string, body: Partial<OrganizationUpdateBody>, mode: WriteMode): Promise<Rec> {
    return this.ds.transaction(async (m) => {
      const before = await this.reader.lock(m, caller, id);
      const current = Object.fromEntries(FIELDS.map((f) => [f, before[f]]));
      const state = nextState(current, pick(body as Rec), mode, DEFAULTS);
      const paymentMethodId = state.paymentMethodId as string | null;
      if (paymentMethodId !== null) {
        const rows = isUuid(paymentMethodId)
          ? ((await m.query('SELECT 1 FROM management.payment_method WHERE id = $1 AND organization_id = $2', [paymentMethodId, caller.organizationId])) as unknown[])
          : [];
        if (rows.length === 0) throw invalid('paymentMethodId', 'is not a payment method of the organization');
      }
      await m.getRepository(OrganizationEntity).update({ id: caller.organizationId }, { ...(state as Partial<OrganizationEntity>), modifiedOn: Date.now() });
      const after = await this.reader.one(m, caller, id);
      await writeChanges(m, caller, { entityType: 'Organization', entityId: id, type: 'Update', before, after, properties: FIELDS });
      return after;
    });
  }
}

function pick(body: Rec): Rec {
  return Object.fromEntries(Object.entries(body).filter(([k]) => FIELDS.includes(k)));
}
