import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fewer writes per logged event (PostgreSQL was about a quarter of the CPU of a delivery):
 *
 * - `delivery_attempt` loses its foreign key to `delivery`: the key's trigger looked up and locked
 *   the delivery row for every attempt, in the statement that then updates that row. The statement
 *   that logs attempts already writes only those of existing deliveries, and pruning deletes a
 *   delivery's attempts with it (see DeliveryRepository.prune).
 * - `delivery.created_on` and `processed_event.processed_on` only serve pruning (older than the
 *   retention): BRIN indexes (one summary per range of pages; the values grow with the rows) instead
 *   of B-trees that took an entry for every row written, and for every new version of a delivery.
 */
export class LighterDeliveryLog1764500000000 implements MigrationInterface {
  name = 'LighterDeliveryLog1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook.delivery_attempt DROP CONSTRAINT delivery_attempt_delivery_id_fkey`);
    await q.query(`DROP INDEX webhook.delivery_created_on`);
    await q.query(`CREATE INDEX delivery_created_on ON webhook.delivery USING brin (created_on)`);
    await q.query(`DROP INDEX webhook.processed_event_processed_on`);
    await q.query(`CREATE INDEX processed_event_processed_on ON webhook.processed_event USING brin (processed_on)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhook.processed_event_processed_on`);
    await q.query(`CREATE INDEX processed_event_processed_on ON webhook.processed_event (processed_on)`);
    await q.query(`DROP INDEX webhook.delivery_created_on`);
    await q.query(`CREATE INDEX delivery_created_on ON webhook.delivery (created_on)`);
    await q.query(
      `DELETE FROM webhook.delivery_attempt a WHERE NOT EXISTS (SELECT 1 FROM webhook.delivery d WHERE d.id = a.delivery_id)`,
    );
    await q.query(
      `ALTER TABLE webhook.delivery_attempt ADD CONSTRAINT delivery_attempt_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES webhook.delivery (id) ON DELETE CASCADE`,
    );
  }
}
