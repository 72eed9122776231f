import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Operators disable an organization (its keys and tokens are refused) and enable it again. */
export class OrganizationDisabled1764300000000 implements MigrationInterface {
  name = 'OrganizationDisabled1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE management.organization ADD COLUMN disabled boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE management.organization DROP COLUMN disabled`);
  }
}
