import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A single API key is disabled (refused like an unknown key) and enabled again. */
export class ApiKeyDisabled1764600000000 implements MigrationInterface {
  name = 'ApiKeyDisabled1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE management.api_key ADD COLUMN disabled boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE management.api_key DROP COLUMN disabled`);
  }
}
