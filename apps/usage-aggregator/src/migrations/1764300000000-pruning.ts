import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Indexes of the pruning (UsagePruner): old processed event ids, and connection rows nothing can change any more. */
export class Pruning1764300000000 implements MigrationInterface {
  name = 'Pruning1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX processed_event_processed_on_idx ON usage.processed_event (processed_on)`);
    await q.query(
      `CREATE INDEX connection_settled_idx ON usage.connection (modified_on) WHERE ended_at IS NOT NULL OR connected_at IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX usage.connection_settled_idx`);
    await q.query(`DROP INDEX usage.processed_event_processed_on_idx`);
  }
}
