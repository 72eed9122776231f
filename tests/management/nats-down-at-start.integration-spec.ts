/**
 * A service started while NATS is down (a NATS server of the test's own, killed first): it listens
 * at once, /healthz answers and /readyz says 503 naming NATS and its request handlers, so an
 * orchestrator sees a live process that is not ready yet (not a process with no port, which its
 * probes would kill over and over); once NATS is up it becomes ready without a restart.
 * management-api stands for every service with NATS request handlers (the service kit's runService).
 */
import {
  createTestDatabase,
  freePort,
  serviceTestEnv,
  spawnService,
  startNatsServer,
  testNamespace,
  waitFor,
  type OwnNatsServer,
  type SpawnedService,
  type TestDatabase,
} from '@switchboard/testing';

describe('a service started while NATS is down', () => {
  let nats: OwnNatsServer | undefined;
  let db: TestDatabase | undefined;
  let service: SpawnedService | undefined;

  afterAll(async () => {
    await service?.stop();
    await nats?.stop();
    await db?.drop();
  });

  it('listens and answers /readyz 503 naming what it waits for, then becomes ready once NATS is up', async () => {
    nats = await startNatsServer();
    await nats.kill();
    db = await createTestDatabase('natsdown');
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const starting = spawnService(
      'management-api',
      { ...serviceTestEnv(testNamespace('natsdown'), db.url), NATS_URL: nats.url, HTTP_PORT: String(port) },
      { readyTimeoutMs: 60000 },
    );
    starting.catch(() => undefined);

    const health = await waitFor(
      async () => (await fetch(`${url}/healthz`).catch(() => null))?.status === 200 || null,
      {
        timeoutMs: 20000,
        intervalMs: 100,
        description: 'management-api to answer /healthz while NATS is down',
      },
    );
    expect(health).toBe(true);
    const readiness = await fetch(`${url}/readyz`);
    expect(readiness.status).toBe(503);
    const body = (await readiness.json()) as { status: string; checks: Record<string, string> };
    expect(body.status).toBe('unavailable');
    expect(body.checks.nats).toMatch(/^failed: /);
    expect(body.checks.requestHandlers).toBe('failed: not subscribed on NATS yet');
    // Its other dependencies (PostgreSQL) are up, and say so.
    const others = Object.entries(body.checks).filter(([name]) => name !== 'nats' && name !== 'requestHandlers');
    expect(others.length).toBeGreaterThan(0);
    expect(others.filter(([, state]) => state !== 'ok')).toEqual([]);

    await nats.start();
    service = await starting;
    const ready = (await (await fetch(`${url}/readyz`)).json()) as { status: string; checks: Record<string, string> };
    expect(ready).toMatchObject({ status: 'ok', checks: { nats: 'ok', requestHandlers: 'ok' } });
  }, 120000);
});
