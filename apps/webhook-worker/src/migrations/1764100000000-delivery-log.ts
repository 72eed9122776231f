import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The delivery outbox and log.
 *
 * - `processed_event`: event ids become text (EventInfo ids are strings, not necessarily UUIDs).
 * - `delivery`: one row per delivery (one event, or the events of one batch call, to one webhook),
 *   written in the same transaction as the `processed_event` rows of its events. It is the source
 *   of truth: a delivery stays `pending` until its final attempt is logged, and the reconciler
 *   queues a pending delivery again when its BullMQ job is gone. It keeps the payload for replays.
 * - `delivery_attempt`: every attempt (the `/WebhookDeliveries` entity set), with the owner and
 *   event columns copied so the entity set is one table.
 */
export class DeliveryLog1764100000000 implements MigrationInterface {
  name = 'DeliveryLog1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook.processed_event ALTER COLUMN event_id TYPE text USING event_id::text`);
    await q.query(`CREATE INDEX processed_event_processed_on ON webhook.processed_event (processed_on)`);
    await q.query(`CREATE TABLE webhook.delivery (
      id uuid PRIMARY KEY,
      webhook_id text NOT NULL,
      webhook_source text NOT NULL CHECK (webhook_source IN ('application', 'channel')),
      url text NOT NULL,
      organization_id text NOT NULL,
      application_id text NOT NULL,
      channel_id text,
      batch boolean NOT NULL,
      reliable boolean NOT NULL,
      event_ids text[] NOT NULL,
      event_types text[] NOT NULL,
      events jsonb NOT NULL,
      replay_of uuid,
      state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'succeeded', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      created_on bigint NOT NULL,
      finished_on bigint
    )`);
    await q.query(`CREATE INDEX delivery_created_on ON webhook.delivery (created_on)`);
    await q.query(`CREATE INDEX delivery_pending ON webhook.delivery (created_on) WHERE state = 'pending'`);
    await q.query(`CREATE TABLE webhook.delivery_attempt (
      id uuid PRIMARY KEY,
      delivery_id uuid NOT NULL REFERENCES webhook.delivery (id) ON DELETE CASCADE,
      webhook_id text NOT NULL,
      webhook_source text NOT NULL,
      organization_id text NOT NULL,
      application_id text NOT NULL,
      channel_id text,
      event_id text NOT NULL,
      event_type text NOT NULL,
      event_ids text[] NOT NULL,
      event_count integer NOT NULL,
      batch boolean NOT NULL,
      url text NOT NULL,
      attempt integer NOT NULL,
      status_code integer,
      error text,
      success boolean NOT NULL,
      final boolean NOT NULL,
      duration_ms integer NOT NULL,
      attempted_on bigint NOT NULL,
      replay_of uuid
    )`);
    await q.query(`CREATE INDEX delivery_attempt_delivery ON webhook.delivery_attempt (delivery_id)`);
    await q.query(`CREATE INDEX delivery_attempt_attempted_on ON webhook.delivery_attempt (attempted_on DESC, id)`);
    await q.query(
      `CREATE INDEX delivery_attempt_organization ON webhook.delivery_attempt (organization_id, attempted_on DESC, id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook.delivery_attempt`);
    await q.query(`DROP TABLE webhook.delivery`);
    await q.query(`DROP INDEX webhook.processed_event_processed_on`);
    await q.query(`ALTER TABLE webhook.processed_event ALTER COLUMN event_id TYPE uuid USING event_id::uuid`);
  }
}
