import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The outbox of the service's change notices (contracts `changes.ts`: the change records of an
 * expiry update or a delete of a channel recording): written in the transaction of the change,
 * relayed to the change notice stream (Nats-Msg-Id = notice_id) by the relay of `recording.outbox`
 * and deleted once JetStream acknowledged them. A table of its own, so the event outbox holds
 * domain events only.
 */
export class ChangeOutbox1764900000000 implements MigrationInterface {
  name = 'ChangeOutbox1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE recording.change_outbox (
      seq bigserial PRIMARY KEY,
      notice_id uuid NOT NULL UNIQUE,
      payload jsonb NOT NULL,
      created_on bigint NOT NULL
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE recording.change_outbox`);
  }
}
