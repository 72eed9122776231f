import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Initial1763800000000 implements MigrationInterface {
  name = 'Initial1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE management.organization (
      id uuid PRIMARY KEY,
      name text,
      created_on bigint NOT NULL,
      modified_on bigint NOT NULL
    )`);
    await q.query(`CREATE TABLE management.api_key (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES management.organization(id),
      key_hash char(64) NOT NULL UNIQUE,
      tag text,
      operator boolean NOT NULL DEFAULT false,
      created_on bigint NOT NULL,
      created_by text,
      modified_on bigint NOT NULL,
      modified_by text
    )`);
    await q.query(`CREATE INDEX api_key_organization_idx ON management.api_key (organization_id, created_on, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE management.api_key`);
    await q.query(`DROP TABLE management.organization`);
  }
}
