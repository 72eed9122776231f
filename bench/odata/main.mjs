// bench/odata: a /ChangeRecords list query (filter, orderby, $top=50) over 1,000,000 change
// records, through the management API's real read path (OData parser -> TypeORM query builder ->
// PostgreSQL -> records), against the same query written by hand and run through `pg`, in the
// same run, on the same database.
//
//   node bench/odata/run.mjs [--rows 1000000] [--queries 2000] [--concurrency 4]
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { startBenchEnvironment } from '../lib/env.mjs';
import { RecordReader } from '../../apps/management-api/dist/common/record-reader.js';
import { parseListQuery } from '../../apps/management-api/dist/common/odata-query.js';
import {
  CHANGE_RECORDS,
  changeRecordModel,
} from '../../apps/management-api/dist/change-records/change-record.model.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const rows = arg('rows', 1_000_000);
const queries = arg('queries', 2000);
const concurrency = arg('concurrency', 4);

const ENTITY_TYPES = [
  'ApplicationConfig',
  'ChannelConfig',
  'ApplicationWebhook',
  'ChannelWebhook',
  'ApiKey',
  'Organization',
  'PaymentMethod',
  'Subscription',
  'UserAccount',
  'ChannelWebhookX',
];
const PROPERTIES = [
  'tag',
  'disabled',
  'url',
  'events',
  'batch',
  'reliable',
  'name',
  'priority',
  'codec',
  'sfu',
  'mcu',
  'rtmp',
  'channelIdPattern',
  'default',
  'recordingEnabled',
  'videoEncodings',
  'sharedSecret',
  'applicationId',
  'address',
  'status',
];

const env = await startBenchEnvironment({ redis: false });
try {
  const admin = new pg.Pool({ connectionString: env.env.DATABASE_URL, max: concurrency });
  admin.on('error', () => {});
  const org = randomUUID();
  const other = randomUUID();
  const now = Date.now();
  await admin.query(
    'INSERT INTO management.organization (id, name, created_on, modified_on) VALUES ($1, $2, $3, $3), ($4, $5, $3, $3)',
    [org, 'bench', now, other, 'other'],
  );
  const loadStarted = Date.now();
  await admin.query(
    `INSERT INTO management.change_record (id, organization_id, type, entity_type, entity_id, property_name, old_value, new_value, changed_on, changed_by)
     SELECT gen_random_uuid(), CASE WHEN g % 10 = 0 THEN $2::uuid ELSE $1::uuid END, CASE WHEN g % 7 = 0 THEN 'Create' ELSE 'Update' END,
            ($3::text[])[1 + (g / 3) % 10], 'entity-' || (g % 5000), ($4::text[])[1 + (g / 10) % 20], 'old-' || g, 'new-' || g, $5::bigint - ($6::bigint - g) * 1000, 'bench'
     FROM generate_series(1, $6::int) AS g`,
    [org, other, ENTITY_TYPES, PROPERTIES, now, rows],
  );
  await admin.query('ANALYZE management.change_record');
  console.log(`loaded ${rows} change records in ${((Date.now() - loadStarted) / 1000).toFixed(1)} s`);

  const ds = new DataSource({
    type: 'postgres',
    url: env.env.DATABASE_URL,
    poolSize: concurrency,
    entities: [],
    synchronize: false,
  });
  await ds.initialize();
  const reader = new RecordReader(CHANGE_RECORDS);
  const caller = { organizationId: org, principal: 'bench', operator: false };
  const params = {
    $filter: "entityType eq 'ApplicationConfig' and propertyName eq 'tag'",
    $orderby: 'changedOn desc',
    $top: '50',
  };

  const viaOData = async () => (await reader.list(ds, caller, parseListQuery(params, changeRecordModel))).value;
  const handSql = `SELECT id, type, entity_type AS "entityType", entity_id AS "entityId", property_name AS "propertyName", old_value AS "oldValue", new_value AS "newValue",
                          changed_on AS "changedOn", changed_by AS "changedBy"
                   FROM management.change_record
                   WHERE organization_id = $1 AND entity_type = $2 AND property_name = $3
                   ORDER BY changed_on DESC, id DESC LIMIT 50`;
  const viaPg = async () =>
    (await admin.query(handSql, [org, 'ApplicationConfig', 'tag'])).rows.map((r) => ({
      ...r,
      changedOn: Number(r.changedOn),
    }));

  const a = await viaOData();
  const b = await viaPg();
  if (a.length === 0 || JSON.stringify(a.map((r) => r.id)) !== JSON.stringify(b.map((r) => r.id))) {
    throw new Error(`the two queries disagree: ${a.length} vs ${b.length} rows`);
  }

  const measure = async (name, fn) => {
    for (let i = 0; i < 100; i++) await fn();
    const latencies = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < queries) {
          const t = performance.now();
          await fn();
          latencies.push(performance.now() - t);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((x, y) => x - y);
    const r = {
      qps: latencies.length / seconds,
      p50: latencies[Math.floor(latencies.length * 0.5)],
      p99: latencies[Math.floor(latencies.length * 0.99)],
    };
    console.log(
      `${name.padEnd(44)} ${r.qps.toFixed(0).padStart(6)} queries/s   p50 ${r.p50.toFixed(2)} ms   p99 ${r.p99.toFixed(2)} ms`,
    );
    return r;
  };
  // Alternate to spread machine noise over both.
  const hand1 = await measure('hand-written SQL through pg', viaPg);
  const odata1 = await measure('OData through the management read path', viaOData);
  const hand2 = await measure('hand-written SQL through pg (again)', viaPg);
  const odata2 = await measure('OData through the management read path (again)', viaOData);
  const ratio = (odata1.qps + odata2.qps) / (hand1.qps + hand2.qps);
  console.log(
    `\nratio OData / hand-written: ${ratio.toFixed(2)} (goal >= 0.7); OData p99 ${Math.max(odata1.p99, odata2.p99).toFixed(2)} ms (goal < 20 ms)`,
  );
  await ds.destroy();
  await admin.end();
} catch (e) {
  console.error(`bench failed: ${e.stack ?? e}`);
  process.exitCode = 1;
} finally {
  await env.stop();
}
