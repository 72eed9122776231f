import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The usage ledger (see libs/contracts/src/messaging/usage.ts):
 * - `processed_event`: event ids are strings in the event contract (not necessarily UUIDs);
 * - `connection`: one row per connection seen, open or ended: the earliest connected time, the
 *   earliest end, the largest frame size; open rows feed the "up to now" part of queries;
 * - `hourly_minutes`: booked participant time per application, organization, clock hour and
 *   maximum-pixel-count bucket, in integer milliseconds;
 * - `hourly_messages`: participant messages per application, organization and clock hour.
 * Times are Unix milliseconds (bigint).
 */
export class UsageLedger1764200000000 implements MigrationInterface {
  name = 'UsageLedger1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE usage.processed_event ALTER COLUMN event_id TYPE text`);
    await q.query(`CREATE TABLE usage.connection (
      application_id text NOT NULL,
      channel_id text NOT NULL,
      user_id text NOT NULL,
      device_id text NOT NULL,
      client_id text NOT NULL,
      connection_id text NOT NULL,
      organization_id text NOT NULL,
      connected_at bigint,
      ended_at bigint,
      max_pixel_count bigint NOT NULL DEFAULT 0 CHECK (max_pixel_count >= 0),
      modified_on bigint NOT NULL,
      PRIMARY KEY (application_id, channel_id, user_id, device_id, client_id, connection_id)
    )`);
    await q.query(
      `CREATE INDEX connection_open_idx ON usage.connection (application_id, connected_at) WHERE ended_at IS NULL AND connected_at IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX connection_client_idx ON usage.connection (application_id, user_id, device_id, client_id)`,
    );
    await q.query(`CREATE TABLE usage.hourly_minutes (
      application_id text NOT NULL,
      organization_id text NOT NULL,
      hour_start bigint NOT NULL CHECK (hour_start >= 0 AND hour_start % 3600000 = 0),
      max_pixel_count bigint NOT NULL CHECK (max_pixel_count >= 0),
      -- no CHECK (>= 0): a negative delta (minutes moving to a larger bucket) goes through the upsert,
      -- and PostgreSQL checks constraints on the proposed row before it detects the conflict
      participant_ms bigint NOT NULL,
      PRIMARY KEY (application_id, organization_id, hour_start, max_pixel_count)
    )`);
    await q.query(`CREATE TABLE usage.hourly_messages (
      application_id text NOT NULL,
      organization_id text NOT NULL,
      hour_start bigint NOT NULL CHECK (hour_start >= 0 AND hour_start % 3600000 = 0),
      participant_messages bigint NOT NULL CHECK (participant_messages >= 0),
      PRIMARY KEY (application_id, organization_id, hour_start)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE usage.hourly_messages`);
    await q.query(`DROP TABLE usage.hourly_minutes`);
    await q.query(`DROP TABLE usage.connection`);
    await q.query(
      `DELETE FROM usage.processed_event WHERE event_id !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'`,
    );
    await q.query(`ALTER TABLE usage.processed_event ALTER COLUMN event_id TYPE uuid USING event_id::uuid`);
  }
}
