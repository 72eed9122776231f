/**
 * OPS_PORT: /healthz, /readyz and /metrics move to a port of their own, so that a public ingress in
 * front of the API port (k8s routes `/` to interface B) does not expose them; the API port answers
 * 404 for them. management-api stands for every service (the service kit's runService).
 */
import {
  createTestDatabase,
  freePort,
  serviceTestEnv,
  spawnService,
  testNamespace,
  type SpawnedService,
  type TestDatabase,
} from '@switchboard/testing';

describe('OPS_PORT', () => {
  let db: TestDatabase | undefined;
  let service: SpawnedService | undefined;
  let ops: string;

  beforeAll(async () => {
    db = await createTestDatabase('opsport');
    const opsPort = await freePort();
    ops = `http://127.0.0.1:${opsPort}`;
    service = await spawnService('management-api', {
      ...serviceTestEnv(testNamespace('opsport'), db.url),
      HTTP_PORT: String(await freePort()),
      OPS_PORT: String(opsPort),
    });
  }, 60000);

  afterAll(async () => {
    await service?.stop();
    await db?.drop();
  });

  it('serves the probes and the metrics on the ops port', async () => {
    const health = await fetch(`${ops}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${ops}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ok', checks: { nats: 'ok', requestHandlers: 'ok' } });
    const metrics = await fetch(`${ops}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(await metrics.text()).toMatch(/^process_cpu_user_seconds_total\{service="management-api"\} /m);
  });

  it('answers nothing else there', async () => {
    expect((await fetch(`${ops}/ApiKeys`)).status).toBe(404);
    expect((await fetch(`${ops}/healthz`, { method: 'POST' })).status).toBe(405);
  });

  it('answers 404 for them on the API port, which still serves the API', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics'])
      expect({ path, status: (await fetch(`${service!.url}${path}`)).status }).toEqual({ path, status: 404 });
    expect((await fetch(`${service!.url}/ApiKeys`)).status).toBe(401);
  });
});
