import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';

/** The servers that tools/testing/global-setup.mjs started for this jest run. */
export interface TestServers {
  /** nats://127.0.0.1:<port>, JetStream enabled. */
  natsUrl: string;
  /** redis://127.0.0.1:<port> */
  redisUrl: string;
  /** Admin URL to the `postgres` database (user postgres, trust authentication). */
  pgUrl: string;
  /** Database with every app's migrations applied, cloned by createTestDatabase. */
  templateDb: string;
  /** .data/test-<jest pid>: scratch space for this run, deleted by the global teardown. */
  dataDir: string;
}

export const TEST_ENV = {
  natsUrl: 'SB_TEST_NATS_URL',
  redisUrl: 'SB_TEST_REDIS_URL',
  pgUrl: 'SB_TEST_PG_URL',
  templateDb: 'SB_TEST_TEMPLATE_DB',
  dataDir: 'SB_TEST_DATA_DIR',
} as const satisfies Record<keyof TestServers, string>;

export function testServers(): TestServers {
  const missing = Object.values(TEST_ENV).filter((name) => !process.env[name]);
  if (missing.length > 0) {
    throw new Error(
      `${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not set. The jest global setup ` +
        '(tools/testing/global-setup.mjs) starts the test servers and sets them: run tests with `npm test` ' +
        'or `npm run jest -- <path>` from the repository root.',
    );
  }
  const env = (key: keyof TestServers) => process.env[TEST_ENV[key]] as string;
  return {
    natsUrl: env('natsUrl'),
    redisUrl: env('redisUrl'),
    pgUrl: env('pgUrl'),
    templateDb: env('templateDb'),
    dataDir: env('dataDir'),
  };
}

function workerId(): string {
  return process.env.JEST_WORKER_ID ?? '0';
}

// Jest gives every test file a fresh module registry, so this counter restarts per file: the random
// part keeps names of different files in one worker apart.
let sequence = 0;

function randomToken(length: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(length);
  let token = '';
  for (const byte of bytes) token += alphabet[byte % alphabet.length];
  return token;
}

function sanitize(label: string, max: number): string {
  return label
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, max);
}

/**
 * A short name unique to this worker and call, usable as a NATS subject token and a Redis key prefix:
 * `t3x9f2k` (worker 3), or `t3x9f2k_orders` with a label.
 */
export function testNamespace(label?: string): string {
  const base = `t${workerId()}${(sequence++).toString(36)}${randomToken(5)}`;
  const suffix = label ? sanitize(label, 24) : '';
  return suffix ? `${base}_${suffix}` : base;
}

/**
 * The environment every service under test shares: the jest run's NATS and Redis, namespace `ns`
 * (its NATS subjects and Redis key prefix), its database when given, warnings and worse logged.
 */
export function serviceTestEnv(ns: string, databaseUrl?: string): Record<string, string> {
  const servers = testServers();
  return {
    NATS_URL: servers.natsUrl,
    NATS_NAMESPACE: ns,
    REDIS_URL: servers.redisUrl,
    REDIS_KEY_PREFIX: `${ns}:`,
    ...(databaseUrl === undefined ? {} : { DATABASE_URL: databaseUrl }),
    LOG_LEVEL: 'warn',
  };
}

/** `url` with its database replaced. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

async function withAdminClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

export interface TestDatabase {
  /** Database name, e.g. t_orders_w2_0_k3j9x. */
  name: string;
  /** postgres:// URL of the new database (user postgres). */
  url: string;
  /** Drops the database, closing connections still open to it. Safe to call twice. */
  drop(): Promise<void>;
}

/** Creates a fresh database cloned from the migrated template (`CREATE DATABASE … TEMPLATE sb_template`). */
export async function createTestDatabase(label = 'db'): Promise<TestDatabase> {
  const { pgUrl, templateDb } = testServers();
  const name = `t_${sanitize(label, 30) || 'db'}_w${workerId()}_${(sequence++).toString(36)}_${randomToken(5)}`;
  await withAdminClient(pgUrl, async (client) => {
    for (let attempt = 1; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE ${quoteIdent(name)} TEMPLATE ${quoteIdent(templateDb)}`);
        return;
      } catch (error) {
        // 55006 object_in_use: something is briefly connected to the template; try again.
        if ((error as { code?: string }).code !== '55006' || attempt >= 50) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  });
  let dropped = false;
  return {
    name,
    url: withDatabase(pgUrl, name),
    async drop() {
      if (dropped) return;
      dropped = true;
      await withAdminClient(pgUrl, (client) =>
        client.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`),
      );
    },
  };
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/** Deletes every Redis key that starts with `prefix`; resolves to how many were deleted. */
export async function flushRedisPrefix(url: string, prefix: string): Promise<number> {
  if (!prefix) throw new Error('flushRedisPrefix needs a non-empty prefix (an empty one would delete every key).');
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  redis.on('error', () => {});
  await redis.connect();
  try {
    let cursor = '0';
    let deleted = 0;
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${escapeGlob(prefix)}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) deleted += await redis.unlink(...keys);
    } while (cursor !== '0');
    return deleted;
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}
