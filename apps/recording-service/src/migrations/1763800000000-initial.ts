import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Consumers of the domain event stream apply each event once: its id is recorded in the same transaction. */
export class Initial1763800000000 implements MigrationInterface {
  name = 'Initial1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE recording.processed_event (
      event_id uuid PRIMARY KEY,
      processed_on bigint NOT NULL
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE recording.processed_event`);
  }
}
