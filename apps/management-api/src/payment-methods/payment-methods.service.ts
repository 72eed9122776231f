import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { PaymentCard, PaymentMethodCreateBody, PaymentMethodUpdateBody } from '@switchboard/contracts';
import type { ODataQuery } from '@switchboard/odata';
import type { DataSource } from 'typeorm';
import type { Caller } from '../auth/caller.js';
import type { WriteMode } from '../common/bodies.js';
import { writeChanges } from '../common/change-log.js';
import { insertRecorded, type RecordedInsert } from '../common/recorded-insert.js';
import { RecordReader, type ListAnswer, type EntityValues } from '../common/record-reader.js';
import { storedCard, type StoredCard } from './payment-card.js';
import { PaymentMethodEntity } from './payment-method.entity.js';
import { PAYMENT_METHODS } from './payment-method.model.js';

/** `card` never holds a number or security code, so its change-log JSON cannot either. */
const FIELDS = ['type', 'status', 'card'];

@Injectable()
export class PaymentMethodsService {
  readonly reader = new RecordReader(PAYMENT_METHODS);
  private readonly insert: RecordedInsert = {
    entity: PaymentMethodEntity,
    reader: this.reader,
    change: { entityType: 'PaymentMethod', properties: FIELDS },
  };

  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  list(caller: Caller, query: ODataQuery): Promise<ListAnswer> {
    return this.reader.list(this.ds, caller, query);
  }

  get(caller: Caller, id: string, query?: ODataQuery): Promise<EntityValues> {
    return this.reader.one(this.ds, caller, id, query);
  }

  async create(caller: Caller, body: Partial<PaymentMethodCreateBody>): Promise<EntityValues> {
    const card = storedCard(body.card, null);
    return this.ds.transaction((m) =>
      insertRecorded(m, caller, this.insert, { type: body.type ?? null, status: body.status ?? null, card }),
    );
  }

  /**
   * PUT replaces `type`, `status` and `card` (absent: null / empty card, keeping the masked number unless a new number
   * is given); PATCH changes the fields given.
   */
  async update(
    caller: Caller,
    id: string,
    body: Partial<PaymentMethodUpdateBody>,
    mode: WriteMode,
  ): Promise<EntityValues> {
    return this.ds.transaction(async (m) => {
      const before = await this.reader.lock(m, caller, id);
      const previous = before.card as StoredCard;
      const pick = <K extends 'type' | 'status'>(k: K) =>
        body[k] !== undefined ? body[k] : mode === 'replace' ? null : (before[k] as string | null);
      const card =
        body.card !== undefined
          ? storedCard(body.card as PaymentCard, previous)
          : mode === 'replace'
            ? storedCard(undefined, previous)
            : previous;
      await m
        .getRepository(PaymentMethodEntity)
        .update(
          { id, organizationId: caller.organizationId },
          { type: pick('type'), status: pick('status'), card, modifiedOn: Date.now(), modifiedBy: caller.principal },
        );
      const after = await this.reader.one(m, caller, id);
      await writeChanges(m, caller, {
        entityType: 'PaymentMethod',
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
