import { DataSource, type DataSourceOptions, type MixedList, type EntitySchema, type ValueTransformer } from 'typeorm';

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

/** Creates the schema when missing, then applies pending migrations, each in its own transaction. */
export async function migrate(o: PersistenceOptions): Promise<string[]> {
  const ds = new DataSource(dataSourceOptions({ ...o, poolSize: 1 }));
  await ds.initialize();
  try {
    await ds.query(`CREATE SCHEMA IF NOT EXISTS "${o.schema.replace(/"/g, '')}"`);
    const applied = await ds.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
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

export async function databaseReadiness(ds: DataSource): Promise<void> {
  await ds.query('SELECT 1');
}
