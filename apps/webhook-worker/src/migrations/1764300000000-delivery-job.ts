import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Deliveries queued together in one BullMQ job (consecutive deliveries of one webhook and channel)
 * record that job's id: the reconciler asks BullMQ about it as well as about the delivery's own id
 * (retries and recoveries run as jobs named after the delivery). Null: a job of its own.
 */
export class DeliveryJob1764300000000 implements MigrationInterface {
  name = 'DeliveryJob1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook.delivery ADD COLUMN job_id uuid`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook.delivery DROP COLUMN job_id`);
  }
}
