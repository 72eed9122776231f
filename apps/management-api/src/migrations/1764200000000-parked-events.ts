import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Parked events (dead letters) of every durable consumer, copied from the `<ns>-parked` stream:
 * one row per (stream, sequence, consumer), so an event parked twice (a crash between parking and
 * acknowledging) is one row. The payload is kept as base64: it may hold what PostgreSQL text and
 * jsonb refuse (NUL, lone surrogates, broken JSON).
 */
export class ParkedEvents1764200000000 implements MigrationInterface {
  name = 'ParkedEvents1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE management.parked_event (
      id uuid PRIMARY KEY,
      service text NOT NULL,
      consumer text NOT NULL,
      stream text NOT NULL,
      stream_sequence bigint NOT NULL,
      subject text NOT NULL,
      payload text NOT NULL,
      payload_preview text NOT NULL,
      error text NOT NULL,
      attempts integer NOT NULL,
      status text NOT NULL DEFAULT 'Parked',
      replays integer NOT NULL DEFAULT 0,
      parked_on bigint NOT NULL,
      replayed_on bigint,
      modified_on bigint NOT NULL,
      CONSTRAINT parked_event_once UNIQUE (stream, stream_sequence, consumer)
    )`);
    await q.query(`CREATE INDEX parked_event_parked_on_idx ON management.parked_event (parked_on, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE management.parked_event`);
  }
}
