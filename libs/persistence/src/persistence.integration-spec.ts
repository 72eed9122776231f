/**
 * migrate() and databaseReadiness() against real PostgreSQL (SB_TEST_PG_URL, an admin URL set by
 * the jest global setup), on a database of their own created empty.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { DataSource, type MigrationInterface, type QueryRunner } from 'typeorm';
import { databaseReadiness, dataSourceOptions, migrate, type PersistenceOptions } from './index.js';

const ADMIN_URL = process.env['SB_TEST_PG_URL'];
if (!ADMIN_URL)
  throw new Error('SB_TEST_PG_URL is not set: run through `npm run jest` (the jest global setup starts PostgreSQL).');

const SCHEMA = 'persistence_check';

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

// Three migrations, the second one slow enough that concurrent runs overlap inside it.
class CreateRooms1700000000001 implements MigrationInterface {
  name = 'CreateRooms1700000000001';
  async up(q: QueryRunner) {
    await q.query(`CREATE TABLE ${SCHEMA}.room (id int PRIMARY KEY)`);
  }
  async down() {}
}
class CreateSeats1700000000002 implements MigrationInterface {
  name = 'CreateSeats1700000000002';
  async up(q: QueryRunner) {
    await q.query('SELECT pg_sleep(0.3)');
    await q.query(`CREATE TABLE ${SCHEMA}.seat (id int PRIMARY KEY, room_id int REFERENCES ${SCHEMA}.room(id))`);
  }
  async down() {}
}
class AddSeatLabel1700000000003 implements MigrationInterface {
  name = 'AddSeatLabel1700000000003';
  async up(q: QueryRunner) {
    await q.query(`ALTER TABLE ${SCHEMA}.seat ADD COLUMN label text`);
  }
  async down() {}
}
const MIGRATIONS = [CreateRooms1700000000001, CreateSeats1700000000002, AddSeatLabel1700000000003];
const NAMES = MIGRATIONS.map((m) => m.name);

describe('persistence against real PostgreSQL', () => {
  let database: string;
  let options: PersistenceOptions;

  beforeEach(async () => {
    database = `t_persistence_${randomBytes(5).toString('hex')}`;
    await admin((c) => c.query(`CREATE DATABASE "${database}"`));
    const url = new URL(ADMIN_URL);
    url.pathname = `/${database}`;
    options = {
      url: url.toString(),
      schema: SCHEMA,
      entities: [],
      migrations: MIGRATIONS,
      applicationName: 'persistence-spec',
    };
  });

  afterEach(async () => {
    await admin((c) => c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`));
  });

  async function appliedRows(): Promise<string[]> {
    const ds = new DataSource(dataSourceOptions({ ...options, poolSize: 1 }));
    await ds.initialize();
    try {
      return ((await ds.query(`SELECT name FROM ${SCHEMA}.migrations ORDER BY name`)) as { name: string }[]).map(
        (r) => r.name,
      );
    } finally {
      await ds.destroy();
    }
  }

  it('migrate() runs started at once on an empty database all succeed and apply each migration once', async () => {
    // As the pods of a Deployment do when they start together, each running its migrate command.
    const runs = await Promise.allSettled(Array.from({ length: 4 }, () => migrate(options)));
    expect(runs.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual(
      [],
    );
    const applied = runs.flatMap((r) => (r as PromiseFulfilledResult<string[]>).value);
    expect(applied.sort()).toEqual([...NAMES].sort());
    expect(await appliedRows()).toEqual([...NAMES].sort());
  });

  it('databaseReadiness fails naming the pending migrations, passes once they are applied, and then only checks the connection', async () => {
    const ds = new DataSource(dataSourceOptions({ ...options, poolSize: 2 }));
    await ds.initialize();
    try {
      // Nothing migrated: not even the schema exists, and the check creates nothing.
      await expect(databaseReadiness(ds)).rejects.toThrow(`3 migrations pending: ${NAMES.join(', ')}`);
      expect(await ds.query(`SELECT 1 FROM information_schema.schemata WHERE schema_name = $1`, [SCHEMA])).toEqual([]);

      // Partly migrated: the one left is named.
      await migrate({ ...options, migrations: MIGRATIONS.slice(0, 2) });
      await expect(databaseReadiness(ds)).rejects.toThrow(`1 migration pending: ${NAMES[2]} (run its migrate command)`);

      await migrate(options);
      await expect(databaseReadiness(ds)).resolves.toBeUndefined();

      // Remembered: the migrations table is not read again (a running process cannot gain a migration).
      await ds.query(`DELETE FROM ${SCHEMA}.migrations`);
      await expect(databaseReadiness(ds)).resolves.toBeUndefined();
    } finally {
      await ds.destroy();
    }
  });
});
