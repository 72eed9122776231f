import net from 'node:net';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createTestDatabase, flushRedisPrefix, testNamespace, testServers } from './index.js';

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

describe('test servers from the global setup', () => {
  const servers = testServers();

  it('runs on loopback, apart from the npm start ports', () => {
    for (const url of [servers.natsUrl, servers.redisUrl, servers.pgUrl]) {
      const parsed = new URL(url);
      expect(parsed.hostname).toBe('127.0.0.1');
      expect(['14222', '16379', '15432']).not.toContain(parsed.port);
    }
    expect(servers.dataDir).toMatch(/\.data\/test-\d+$/);
    expect(servers.templateDb).toBe('sb_template');
  });

  it('NATS greets with an INFO line that has JetStream on', async () => {
    const { hostname, port } = new URL(servers.natsUrl);
    const line = await new Promise<string>((resolve, reject) => {
      const socket = net.connect({ host: hostname, port: Number(port) });
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString('utf8');
        const end = text.indexOf('\r\n');
        if (end >= 0) {
          socket.destroy();
          resolve(text.slice(0, end));
        }
      });
      socket.once('error', reject);
    });
    expect(line.startsWith('INFO ')).toBe(true);
    expect(JSON.parse(line.slice(5))).toMatchObject({ jetstream: true });
  });

  it('Redis answers PING', async () => {
    const redis = new Redis(servers.redisUrl, { lazyConnect: true });
    await redis.connect();
    try {
      expect(await redis.ping()).toBe('PONG');
    } finally {
      await redis.quit();
    }
  });

  it('PostgreSQL answers select 1 and has the template database', async () => {
    expect(await query(servers.pgUrl, 'select 1 as one')).toEqual([{ one: 1 }]);
    const rows = await query<{ datistemplate: boolean; datallowconn: boolean }>(
      servers.pgUrl,
      'select datistemplate, datallowconn from pg_database where datname = $1',
      [servers.templateDb],
    );
    expect(rows).toEqual([{ datistemplate: true, datallowconn: false }]);
  });
});

describe('createTestDatabase', () => {
  it('gives a usable database cloned from the template, and drop removes it', async () => {
    const db = await createTestDatabase('usable');
    expect(db.name).toMatch(/^t_usable_w\d+_/);
    expect(new URL(db.url).pathname).toBe(`/${db.name}`);
    await query(db.url, 'create table t (id int primary key)');
    await query(db.url, 'insert into t values (1), (2)');
    expect(await query(db.url, 'select count(*)::int as n from t')).toEqual([{ n: 2 }]);

    // Open connections do not block drop().
    const lingering = new pg.Client({ connectionString: db.url });
    lingering.on('error', () => {});
    await lingering.connect();
    await db.drop();
    await lingering.end().catch(() => {});
    await db.drop();

    const { pgUrl } = testServers();
    expect(await query(pgUrl, 'select 1 from pg_database where datname = $1', [db.name])).toEqual([]);
  });

  it('gives every caller its own database, also in parallel', async () => {
    const dbs = await Promise.all(Array.from({ length: 6 }, (_, i) => createTestDatabase(`parallel ${i}`)));
    try {
      expect(new Set(dbs.map((d) => d.name)).size).toBe(6);
      await Promise.all(dbs.map((d) => query(d.url, 'select 1')));
    } finally {
      await Promise.all(dbs.map((d) => d.drop()));
    }
  });
});

describe('testNamespace and flushRedisPrefix', () => {
  it('namespaces are unique NATS-safe tokens', () => {
    const names = Array.from({ length: 200 }, () => testNamespace());
    expect(new Set(names).size).toBe(200);
    for (const name of names) expect(name).toMatch(/^t[0-9][a-z0-9]+$/);
    expect(testNamespace('Orders.Kick *')).toMatch(/^t[0-9][a-z0-9]+_orders_kick$/);
  });

  it('deletes only the keys with the prefix', async () => {
    const { redisUrl } = testServers();
    const mine = testNamespace();
    const other = testNamespace();
    const redis = new Redis(redisUrl, { lazyConnect: true });
    await redis.connect();
    try {
      for (let i = 0; i < 1500; i++) await redis.set(`${mine}:k${i}`, '1');
      await redis.set(`${other}:k`, '1');
      await redis.set(`${mine}*literal`, '1');
      expect(await flushRedisPrefix(redisUrl, `${mine}:`)).toBe(1500);
      expect(await redis.exists(`${other}:k`, `${mine}*literal`)).toBe(2);
      await expect(flushRedisPrefix(redisUrl, '')).rejects.toThrow(/non-empty prefix/);
      await flushRedisPrefix(redisUrl, other);
      await flushRedisPrefix(redisUrl, mine);
    } finally {
      await redis.quit();
    }
  });
});
