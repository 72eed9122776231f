import {
  DataSource,
  MigrationExecutor,
  type DataSourceOptions,
  type MixedList,
  type EntitySchema,
  type ValueTransformer,
} from 'typeorm';

type EntityList = MixedList<string | (new (...args: never[]) => unknown) | EntitySchema>;

export interface PersistenceOptions {
  url: string;
  /** The service's own schema; its migrations table lives there too. */
  schema: string;
  entities: EntityList;
  migrations: EntityList;
  poolSize?: number;
  applicationName?: string;
}

/** DataSource options shared by every service: migrations only, never `synchronize`. */
export function dataSourceOptions(o: PersistenceOptions): DataSourceOptions {
  return {
    type: 'postgres',
    url: o.url,
    schema: o.schema,
    entities: o.entities,
    migrations: o.migrations,
    migrationsTableName: 'migrations',
    migrationsRun: false,
    synchronize: false,
    logging: false,
    poolSize: o.poolSize ?? 10,
    applicationName: o.applicationName,
    extra: { connectionTimeoutMillis: 5000, statement_timeout: 30000 },
  } as DataSourceOptions;
}

/**
 * Key of the PostgreSQL advisory lock a migrate run holds from start to end: one run at a time per
 * database, of whichever service (the Kubernetes pods of every service migrate as they start, in
 * parallel). TypeORM takes no lock of its own: two concurrent runs both create the migrations table
 * and both apply the first migration, and one fails. (The management-api bootstrap locks 7301.)
 */
export const MIGRATION_LOCK_KEY = 7300;

/**
 * Creates the schema when missing, then applies pending migrations, each in its own transaction,
 * under MIGRATION_LOCK_KEY: a run that finds another one migrating waits for it, then applies what
 * is still pending (usually nothing).
 */
export async function migrate(o: PersistenceOptions): Promise<string[]> {
  // Two connections: one holds the lock, the other migrates.
  const ds = new DataSource(dataSourceOptions({ ...o, poolSize: 2 }));
  await ds.initialize();
  const lock = ds.createQueryRunner();
  try {
    await lock.connect();
    // The lock waits as long as another run migrates, beyond the pool's statement timeout.
    await lock.query('SET statement_timeout = 0');
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await ds.query(`CREATE SCHEMA IF NOT EXISTS "${o.schema.replace(/"/g, '')}"`);
      const applied = await ds.runMigrations({ transaction: 'each' });
      return applied.map((m) => m.name);
    } finally {
      await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    }
  } finally {
    await lock.release();
    await ds.destroy();
  }
}

/** Entry point body of `dist/migrate.js` scripts: prints what it applied, exits non-zero on failure. */
export async function migrateCli(service: string, options: () => PersistenceOptions): Promise<void> {
  try {
    const applied = await migrate(options());
    process.stdout.write(`${service}: ${applied.length ? `applied ${applied.join(', ')}` : 'schema up to date'}\n`);
  } catch (e) {
    process.stderr.write(`${service}: migration failed: ${(e as Error).message}\n`);
    process.exitCode = 1;
  }
}

/** int64 Unix-millisecond columns: PostgreSQL returns bigint as text. */
export const int64: ValueTransformer = {
  to: (v: number | null | undefined) => v,
  from: (v: string | null) => (v === null ? null : Number(v)),
};

/** Names of the migrations of `ds` not applied to its schema yet; reads only (no table is created). */
export async function pendingMigrations(ds: DataSource): Promise<string[]> {
  const pending = await new MigrationExecutor(ds).getPendingMigrations();
  return pending.map((m) => m.name);
}

/** Data sources whose migrations were all found applied: none can become pending while the process runs. */
const migrated = new WeakSet<DataSource>();

/**
 * The /readyz check of a service's database: reachable, and its schema migrated. While migrations of
 * the data source are pending it fails naming them, so a service started on an unmigrated schema
 * takes no traffic (it would answer 500 on every query). Once they are all applied it is remembered,
 * and later probes only run SELECT 1.
 */
export async function databaseReadiness(ds: DataSource): Promise<void> {
  await ds.query('SELECT 1');
  if (migrated.has(ds)) return;
  const pending = await pendingMigrations(ds);
  if (pending.length > 0)
    throw new Error(
      `${pending.length} migration${pending.length > 1 ? 's' : ''} pending: ${pending.join(', ')} (run its migrate command)`,
    );
  migrated.add(ds);
}
