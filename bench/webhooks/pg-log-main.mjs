// PostgreSQL alone: the CPU of the outbox insert and of the attempt log statement per delivery, as
// the worker sends them (the statements are read from apps/webhook-worker/src/log/delivery.repository.ts),
// on tables made like the migrated ones (`LIKE ... INCLUDING ALL`), and on variants of their
// indexes or storage. CPU = the one backend's utime + stime (/proc), so other load on the machine
// matters less than in run.mjs. See bench/webhooks/README.md ("Method").
//
//   node bench/webhooks/pg-log.mjs [variant ...]   (default: all; --deliveries 20000 --rounds 3 --per-log 60)
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { startBenchEnvironment } from '../lib/env.mjs';
import { REPO_ROOT } from '../../tools/stack/apps.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const DELIVERIES = arg('deliveries', 20000);
const ROUNDS = arg('rounds', 3);
const PER_LOG = arg('per-log', 60);
const INTAKE_GROUP = 2000;

const src = fs.readFileSync(path.join(REPO_ROOT, 'apps/webhook-worker/src/log/delivery.repository.ts'), 'utf8');
const constant = (name) => {
  const m = src.match(new RegExp(`const ${name} = \`([\\s\\S]*?)\`;`));
  if (!m) throw new Error(`${name} not found in delivery.repository.ts`);
  return m[1];
};
const INSERT = constant('INSERT_DELIVERIES').replace('${DELIVERY_COLUMNS}', constant('DELIVERY_COLUMNS'));
const WRITE = constant('WRITE_ATTEMPTS').replace('${ATTEMPT_COLUMNS}', constant('ATTEMPT_COLUMNS'));

/**
 * DDL dropping the copied attempt index whose definition matches `predicate` (LIKE names copies after their columns).
 */
const dropAttemptIndex = (predicate) =>
  `DO $$ DECLARE i text; BEGIN SELECT indexname INTO i FROM pg_indexes WHERE schemaname = 'v' AND tablename = 'delivery_attempt' AND indexdef ${predicate}; EXECUTE 'DROP INDEX v.' || i; END $$`;

/** Variants: DDL on the copies (schema `v`), and the insert and attempt log statements to use. */
const VARIANTS = {
  current: { ddl: [] },
  // The upper bound of HOT updates: without the partial index on `state`, nothing the UPDATE changes is indexed.
  'no-pending-index': { ddl: ['DROP INDEX v.delivery_pending_idx'] },
  'no-pending-index-ff75': {
    ddl: ['DROP INDEX v.delivery_pending_idx', 'ALTER TABLE v.delivery SET (fillfactor = 75)'],
  },
  ff75: { ddl: ['ALTER TABLE v.delivery SET (fillfactor = 75)'] },
  // What parts of the attempt log cost: without its UPDATE of the delivery (the INSERT of the attempt
  // alone), and without either of the attempt table's time-ordered indexes (operator and tenant listings).
  'no-update': { ddl: [], write: (w) => w.replace(/\)\s*UPDATE webhook\.delivery d SET[\s\S]*$/, ') SELECT 1') },
  'no-attempted-on-index': {
    ddl: [dropAttemptIndex("LIKE '%(attempted_on DESC, id)%' AND indexdef NOT LIKE '%organization_id%'")],
  },
  'no-organization-index': { ddl: [dropAttemptIndex("LIKE '%organization_id%'")] },
  'events-json': {
    ddl: ['ALTER TABLE v.delivery ALTER COLUMN events TYPE json'],
    insert: (s) =>
      s.replace('jsonb_to_recordset($1::jsonb)', 'json_to_recordset($1::json)').replace('events jsonb', 'events json'),
  },
};
const names = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !all[i - 1]?.startsWith('--'));
for (const n of names)
  if (!VARIANTS[n]) throw new Error(`unknown variant ${n}; known: ${Object.keys(VARIANTS).join(', ')}`);

const env = await startBenchEnvironment({ redis: false });
const client = new pg.Client({ connectionString: env.env.DATABASE_URL });
try {
  await client.connect();
  const { pid } = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0];
  const cpuUs = () => {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1e6) / 100;
  };
  const event = (i) => ({
    id: randomUUID(),
    type: 'message.published',
    timestamp: Date.now(),
    applicationId: 'app-1',
    organizationId: 'org-1',
    channelId: `channel-${i % 100}`,
    data: { clientId: `client-${i}`, name: 'chat', payload: { text: 'hello world '.repeat(10), n: i } },
  });
  for (const name of names.length > 0 ? names : Object.keys(VARIANTS)) {
    const variant = VARIANTS[name];
    await client.query('DROP SCHEMA IF EXISTS v CASCADE; CREATE SCHEMA v');
    await client.query(
      'CREATE TABLE v.delivery (LIKE webhook.delivery INCLUDING ALL); CREATE TABLE v.delivery_attempt (LIKE webhook.delivery_attempt INCLUDING ALL)',
    );
    // LIKE names the copied indexes after their columns; the partial one on created_on is the one with a predicate.
    const partial = (
      await client.query(`SELECT indexname FROM pg_indexes WHERE schemaname = 'v' AND indexdef LIKE '%WHERE%'`)
    ).rows[0]?.indexname;
    for (const ddl of variant.ddl) await client.query(partial ? ddl.replace('delivery_pending_idx', partial) : ddl);
    const insert = (variant.insert ?? ((s) => s))(INSERT).replaceAll('webhook.', 'v.');
    const write = (variant.write ?? ((w) => w))(WRITE).replaceAll('webhook.', 'v.');
    let insertUs = 0;
    let logUs = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const ids = [];
      for (let g = 0; g < DELIVERIES; g += INTAKE_GROUP) {
        const rows = [];
        for (let i = 0; i < Math.min(INTAKE_GROUP, DELIVERIES - g); i++) {
          const e = event(i);
          const id = randomUUID();
          ids.push(id);
          rows.push({
            id,
            webhook_id: 'webhook-1',
            webhook_source: 'application',
            url: 'http://127.0.0.1:9/hook',
            organization_id: 'org-1',
            application_id: 'app-1',
            channel_id: e.channelId,
            batch: false,
            reliable: true,
            event_ids: [e.id],
            event_types: [e.type],
            events: [e],
            replay_of: null,
            job_id: null,
            created_on: Date.now(),
          });
        }
        const t = cpuUs();
        await client.query(insert, [JSON.stringify(rows)]);
        insertUs += cpuUs() - t;
      }
      for (let i = 0; i < ids.length; i += PER_LOG) {
        const rows = ids.slice(i, i + PER_LOG).map((d) => ({
          id: randomUUID(),
          delivery_id: d,
          attempt: 1,
          status_code: 200,
          error: null,
          success: true,
          final: true,
          duration_ms: 5,
          attempted_on: Date.now(),
        }));
        const t = cpuUs();
        await client.query(write, [JSON.stringify(rows)]);
        logUs += cpuUs() - t;
      }
    }
    const n = DELIVERIES * ROUNDS;
    // Statistics reach pg_stat_* when the backend is idle for a moment.
    await new Promise((r) => setTimeout(r, 1500));
    const st = (
      await client.query(
        `SELECT n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables WHERE schemaname = 'v' AND relname = 'delivery'`,
      )
    ).rows[0];
    const size = (
      await client.query(`SELECT pg_relation_size('v.delivery') AS heap, pg_indexes_size('v.delivery') AS idx`)
    ).rows[0];
    console.log(
      `${name.padEnd(22)} outbox insert ${(insertUs / n).toFixed(1)} µs/delivery, attempt log ${(logUs / n).toFixed(1)} µs/delivery; ` +
        `HOT updates ${st?.hot ?? '?'} of ${st?.upd ?? '?'}; delivery heap ${(size.heap / 1e6).toFixed(1)} MB, its indexes ${(size.idx / 1e6).toFixed(1)} MB`,
    );
  }
} finally {
  await client.end().catch(() => undefined);
  await env.stop();
}
