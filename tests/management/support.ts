/**
 * Harness of the management API integration tests: a fresh database cloned from the migrated
 * template, the first organization and its operator key made by the real bootstrap script, a second
 * organization with a key of its own (inserted the way the service stores keys), and the service
 * spawned as its own process on the test NATS.
 */
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import {
  createTestDatabase,
  findApp,
  freePort,
  spawnService,
  testNamespace,
  testServers,
  type SpawnedService,
  type TestDatabase,
} from '@switchboard/testing';
import { call, type Answer } from '../e2e/http.js';

const run = promisify(execFile);

export interface Harness {
  url: string;
  ns: string;
  db: TestDatabase;
  service: SpawnedService;
  env: Record<string, string>;
  /** Organization A (made by bootstrap) and its operator key. */
  orgA: string;
  keyA: string;
  /** Organization B (made in SQL) and its key. */
  orgB: string;
  keyB: string;
  /** Calls the management API with organization A's key unless `key` says otherwise. */
  api<T = any>(
    method: string,
    path: string,
    options?: { key?: string | null; body?: unknown; raw?: string; headers?: Record<string, string> },
  ): Promise<Answer<T>>;
  sql: <T extends pg.QueryResultRow = any>(text: string, params?: unknown[]) => Promise<T[]>;
  stop(): Promise<void>;
}

/** `db`: a database of the test's own (e.g. on a server it crashes) instead of a clone of the shared template. */
export async function startManagement(
  label: string,
  extraEnv: Record<string, string> = {},
  own: { db?: TestDatabase } = {},
): Promise<Harness> {
  const servers = testServers();
  const db = own.db ?? (await createTestDatabase(label));
  const ns = testNamespace(label);
  const env = {
    NATS_URL: servers.natsUrl,
    NATS_NAMESPACE: ns,
    DATABASE_URL: db.url,
    LOG_LEVEL: 'warn',
    NATS_REQUEST_TIMEOUT_MS: '1500',
    ...extraEnv,
  };
  const boot = await run(process.execPath, [findApp('management-api').bootstrap!], { env: { ...process.env, ...env } });
  const { apiKey: keyA, organizationId: orgA } = JSON.parse(boot.stdout) as { apiKey: string; organizationId: string };
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  // An idle client cut off by the database drop at teardown must not crash the suite.
  pool.on('error', () => undefined);
  const sql = async <T extends pg.QueryResultRow>(text: string, params: unknown[] = []) =>
    (await pool.query<T>(text, params)).rows;
  const { orgId: orgB, key: keyB } = await insertOrganizationWithKey(sql, 'organization B');
  const service = await spawnService('management-api', { ...env, HTTP_PORT: String(await freePort()) });
  const url = service.url!;
  return {
    url,
    ns,
    db,
    service,
    env,
    orgA,
    keyA,
    orgB,
    keyB,
    api: (method, path, options = {}) => {
      const key = options.key === undefined ? keyA : options.key;
      const headers: Record<string, string> = { ...options.headers };
      if (key !== null) headers['X-API-Key'] = key;
      return call(method, `${url}${path}`, {
        headers,
        ...(options.body !== undefined ? { body: options.body } : {}),
        ...(options.raw !== undefined ? { raw: options.raw } : {}),
      });
    },
    sql,
    async stop() {
      await service.stop();
      await pool.end();
      await db.drop();
    },
  };
}

/** A second organization with a key of its own, stored the way management-api stores keys (SHA-256). */
export async function insertOrganizationWithKey(
  sql: Harness['sql'],
  name: string,
): Promise<{ orgId: string; key: string }> {
  const key = `sb_${randomUUID().replace(/-/g, '')}${randomUUID().replace(/-/g, '')}`;
  const orgId = randomUUID();
  const now = Date.now();
  await sql('INSERT INTO management.organization (id, name, created_on, modified_on) VALUES ($1, $2, $3, $3)', [
    orgId,
    name,
    now,
  ]);
  await sql(
    'INSERT INTO management.api_key (id, organization_id, key_hash, tag, operator, created_on, created_by, modified_on, modified_by) VALUES ($1, $2, $3, $4, false, $5, $6, $5, $6)',
    [randomUUID(), orgId, createHash('sha256').update(key).digest('hex'), `${name} key`, now, 'test'],
  );
  return { orgId, key };
}

/** `encodeURIComponent` for every value of an OData query. */
export function q(options: Record<string, string | number | boolean>): string {
  return `?${Object.entries(options)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join('&')}`;
}

/** Change records of one entity, in the order they were written (read through the API). */
export async function changesOf(h: Harness, entityId: string, key?: string): Promise<Array<Record<string, any>>> {
  const answer = await h.api<{ value: Array<Record<string, any>> }>(
    'GET',
    `/ChangeRecords${q({ $filter: `entityId eq '${entityId}'`, $top: 1000 })}`,
    { key },
  );
  expect(answer.status).toBe(200);
  return answer.body.value;
}

/** Change records as `{ property: [old, new] }` for one change type. */
export function changeMap(
  records: Array<Record<string, any>>,
  type: string,
): Record<string, [string | null, string | null]> {
  return Object.fromEntries(
    records.filter((r) => r.type === type).map((r) => [r.propertyName, [r.oldValue, r.newValue]]),
  );
}

/** The webhook a create or update answers with: defaults of the record, the audit fields set, `fields` over them. */
export function expectedWebhook(
  parent: { applicationConfigId: string } | { channelConfigId: string },
  fields: Record<string, unknown>,
): Record<string, unknown> {
  return {
    ...parent,
    name: null,
    url: null,
    disabled: false,
    batch: false,
    reliable: false,
    events: null,
    id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    createdOn: expect.any(Number),
    createdBy: expect.any(String),
    modifiedOn: expect.any(Number),
    modifiedBy: expect.any(String),
    ...fields,
  };
}
