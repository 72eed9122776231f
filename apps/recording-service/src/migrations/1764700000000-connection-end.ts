import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `connection_end`: a recorded connection's end (`connection.closed`/`failed`) applied while it had
 * no recording open: its connect may still come (another replica applying it later, a redelivery),
 * and must then make a recording that stops at this end instead of one nothing closes. Forgotten
 * with the processed event ids (its events cannot come back after that).
 */
export class ConnectionEnd1764700000000 implements MigrationInterface {
  name = 'ConnectionEnd1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE recording.connection_end (
      application_id text NOT NULL,
      channel_id text NOT NULL,
      user_id text NOT NULL,
      device_id text NOT NULL,
      client_id text NOT NULL,
      connection_id text NOT NULL,
      stop_timestamp bigint NOT NULL,
      reason text NOT NULL,
      created_on bigint NOT NULL,
      PRIMARY KEY (application_id, channel_id, user_id, device_id, client_id, connection_id)
    )`);
    await q.query(`CREATE INDEX connection_end_created_on ON recording.connection_end USING brin (created_on)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE recording.connection_end`);
  }
}
