import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The outbox of the service's own domain events (`*.ready`, `channel.recording.mux.failed` /
 * `move.failed`, `channel.recording.expired`): written in the transaction of the state change they
 * announce, relayed to JetStream (Nats-Msg-Id = event_id) and deleted once JetStream acknowledged
 * them. `seq` keeps the relay in commit order.
 */
export class Outbox1764300000000 implements MigrationInterface {
  name = 'Outbox1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE recording.outbox (
      seq bigserial PRIMARY KEY,
      event_id text NOT NULL UNIQUE,
      event_type text NOT NULL,
      payload jsonb NOT NULL,
      created_on bigint NOT NULL
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE recording.outbox`);
  }
}
