/**
 * The simulator against an in-process admin-gateway, a fake runtime-registry and management-api
 * on the real NATS, and a small fake management HTTP API (application configs and tokens).
 */
import { encodeClientToken, type ClientTokenPayload } from '@switchboard/contracts';
import { testNamespace, testServers, waitFor } from '@switchboard/testing';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { startFakeRuntime, type FakeRuntime } from '../../apps/admin-gateway/src/testing/fake-runtime.testing.js';
import { startTestGateway, type TestGateway } from '../../apps/admin-gateway/src/testing/gateway.testing.js';
import { parseArgs, parseDuration, parseRate, runSimulation, Simulation } from './src/index.mjs';

const API_KEY = 'sb_simulator-test-key';

interface FakeManagement {
  url: string;
  configs: Map<string, { id: string; applicationId: string; sharedSecret: string }>;
  tokenRequests: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** The three management API operations the simulator uses, answering like management-api. */
async function startFakeManagement(fake: FakeRuntime): Promise<FakeManagement> {
  const configs = new Map<string, { id: string; applicationId: string; sharedSecret: string }>();
  const tokenRequests: Array<Record<string, unknown>> = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.headers['x-api-key'] !== API_KEY)
        return send(401, { error: { code: 'Unauthorized', message: 'no', target: null, details: [] } });
      const url = new URL(req.url ?? '/', 'http://x');
      if (req.method === 'GET' && url.pathname === '/ApplicationConfigs') {
        const wanted = /applicationId eq '(.*)'/.exec(url.searchParams.get('$filter') ?? '')?.[1];
        return send(200, {
          value: [...configs.values()]
            .filter((c) => c.applicationId === wanted)
            .map((c) => ({ id: c.id, applicationId: c.applicationId, sharedSecret: null })),
        });
      }
      if (req.method === 'POST' && url.pathname === '/ApplicationConfigs') {
        const body = JSON.parse(raw) as { applicationId: string };
        const config = { id: randomUUID(), applicationId: body.applicationId, sharedSecret: `secret-${randomUUID()}` };
        configs.set(config.id, config);
        fake.applications.set(config.applicationId, {
          applicationId: config.applicationId,
          applicationConfigId: config.id,
          organizationId: 'org-sim',
          sharedSecret: config.sharedSecret,
          disabled: false,
        });
        return send(201, { id: config.id, applicationId: config.applicationId, sharedSecret: config.sharedSecret });
      }
      const token = /^\/ApplicationConfigs\/([^/]+)\/Token$/.exec(url.pathname);
      if (req.method === 'POST' && token) {
        const config = configs.get(decodeURIComponent(token[1]!));
        if (!config) return send(404, { error: { code: 'NotFound', message: 'no', target: null, details: [] } });
        const claims = JSON.parse(raw) as {
          userId: string;
          deviceId: string;
          clientId: string;
          clientRoles: string[];
          channelClaims: Array<{ id: string }>;
        };
        tokenRequests.push(claims);
        const iat = Math.floor(Date.now() / 1000);
        const payload: ClientTokenPayload = {
          iat,
          exp: iat + 600,
          type: 'register',
          applicationId: config.applicationId,
          userId: claims.userId,
          deviceId: claims.deviceId,
          clientId: claims.clientId,
          clientRoles: claims.clientRoles,
          channels: claims.channelClaims,
        };
        return send(200, { value: encodeClientToken(payload, config.sharedSecret) });
      }
      send(404, { error: { code: 'NotFound', message: 'no route', target: null, details: [] } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    configs,
    tokenRequests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('simulator', () => {
  const servers = testServers();
  const ns = testNamespace('simulator');
  let fake: FakeRuntime;
  let gateway: TestGateway;
  let management: FakeManagement;

  beforeAll(async () => {
    fake = await startFakeRuntime(servers.natsUrl, ns);
    [gateway, management] = await Promise.all([startTestGateway(servers.natsUrl, ns), startFakeManagement(fake)]);
  });

  afterAll(async () => {
    await gateway?.close();
    await management?.close();
    await fake?.close();
  });

  it('creates the application, starts media servers, connects every client over /sync and unregisters them', async () => {
    const applicationId = `sim-app-${randomUUID()}`;
    const report = await runSimulation({
      gatewayUrl: gateway.url,
      managementUrl: management.url,
      apiKey: API_KEY,
      applicationId,
      natsUrl: servers.natsUrl,
      namespace: ns,
      mediaServers: 2,
      region: 'eu-test',
      clients: 12,
      channels: 3,
      churnPerSecond: 50,
      durationMs: 300,
    });
    expect(report.application).toEqual({ applicationId, applicationConfigId: expect.any(String), created: true });
    expect(report.clients).toEqual(expect.objectContaining({ requested: 12, connected: 12, failed: 0 }));
    expect(report.errors).toEqual({ total: 0, byCode: {}, samples: [] });
    expect(report.churn.requested).toBe(report.churn.performed + report.churn.skipped + report.churn.failed);
    expect(report.operations.register).toEqual({
      count: 12,
      errors: 0,
      latencyMs: expect.objectContaining({ p50: expect.any(Number), p99: expect.any(Number) }),
    });
    expect(report.operations.unregister!.count).toBe(12);
    expect(report.closes).toEqual({ '1000': 12 });
    expect(management.tokenRequests).toHaveLength(12);
    expect(management.tokenRequests[0]).toEqual({
      userId: expect.stringMatching(/^sim-u-/),
      deviceId: expect.stringMatching(/^sim-d-/),
      clientId: expect.stringMatching(/^sim-c-/),
      clientRoles: ['simulated'],
      channelClaims: [{ id: 'sim-ch-0' }, { id: 'sim-ch-1' }, { id: 'sim-ch-2' }],
    });

    const ofApp = fake.reports.filter((r) => r.client.applicationId === applicationId);
    expect(ofApp.filter((r) => r.kind === 'client.register')).toHaveLength(12);
    expect(ofApp.filter((r) => r.kind === 'client.unregister')).toHaveLength(12);
    const connected = ofApp.filter((r) => r.kind === 'connection.state' && r.state === 'connected');
    expect(connected.length).toBeGreaterThanOrEqual(12);
    const firstJoins = new Map<string, string>();
    for (const r of ofApp)
      if (r.kind === 'client.join' && !firstJoins.has(r.client.clientId))
        firstJoins.set(r.client.clientId, r.channelId);
    expect(new Set(firstJoins.values())).toEqual(new Set(['sim-ch-0', 'sim-ch-1', 'sim-ch-2']));
    expect(
      ofApp.filter((r) => r.kind === 'connection.open').every((r) => r.kind === 'connection.open' && r.type === 'sfu'),
    ).toBe(true);

    expect(report.mediaServers).toHaveLength(2);
    for (const server of report.mediaServers) {
      const beat = fake.heartbeats.find((h) => h.server.id === server.id);
      expect(beat).toEqual({
        role: 'mediaserver',
        server: expect.objectContaining({
          id: server.id,
          region: 'eu-test',
          capacity: 1000,
          addresses: expect.any(Array),
          computer: expect.objectContaining({ hostName: expect.any(String) }),
        }),
      });
    }
  });

  it('reuses the application config, churns joins, leaves and mutes, and counts the pushes its clients receive', async () => {
    const applicationId = `sim-app-${randomUUID()}`;
    await runSimulation({
      gatewayUrl: gateway.syncUrl,
      managementUrl: management.url,
      apiKey: API_KEY,
      applicationId,
      clients: 1,
      channels: 1,
    });
    const simulation = new Simulation({
      gatewayUrl: gateway.syncUrl,
      managementUrl: management.url,
      apiKey: API_KEY,
      applicationId,
      clients: 4,
      channels: 3,
    });
    try {
      await simulation.start();
      expect(simulation.report().application!.created).toBe(false);
      for (let i = 0; i < 30; i++) await simulation.churnOnce();
      const churn = simulation.report().churn;
      expect(churn).toEqual(expect.objectContaining({ requested: 30, performed: 30, failed: 0, skipped: 0 }));
      expect(churn.byAction.join + churn.byAction.leave + churn.byAction.mute).toBe(30);
      const target = simulation.clients[0]!;
      await fake.push(gateway.gatewayId, {
        deliveries: [
          {
            client: { applicationId, userId: target.userId, deviceId: target.deviceId, clientId: target.clientId },
            push: { type: 'kicked', channelId: 'sim-ch-9' },
          },
        ],
      });
      await waitFor(() => simulation.report().pushes.received === 1);
      expect(simulation.report().pushes.byType).toEqual({ kicked: 1 });
    } finally {
      await simulation.stop();
    }
    const report = simulation.report();
    expect(report.errors.total).toBe(0);
    const updates = fake.reports.filter(
      (r) => r.client.applicationId === applicationId && r.kind === 'connection.update',
    );
    expect(updates).toHaveLength(report.churn.byAction.mute);
  });

  it('signs tokens itself with a known shared secret', async () => {
    fake.applications.set('sim-local', {
      applicationId: 'sim-local',
      applicationConfigId: 'cfg-local',
      organizationId: 'org-sim',
      sharedSecret: 'local-secret',
      disabled: false,
    });
    const report = await runSimulation({
      gatewayUrl: gateway.url,
      sharedSecret: 'local-secret',
      applicationId: 'sim-local',
      clients: 3,
      channels: 1,
      connectionType: 'mcu',
    });
    expect(report.clients).toEqual(expect.objectContaining({ connected: 3, failed: 0 }));
    expect(report.application).toEqual({ applicationId: 'sim-local', applicationConfigId: null, created: false });
  });

  it("pipelines each client's register, join, connection.open and states, which the gateway runs in order", async () => {
    fake.applications.set('sim-pipe', {
      applicationId: 'sim-pipe',
      applicationConfigId: 'cfg-pipe',
      organizationId: 'org-sim',
      sharedSecret: 'pipe-secret',
      disabled: false,
    });
    const report = await runSimulation({
      gatewayUrl: gateway.url,
      sharedSecret: 'pipe-secret',
      applicationId: 'sim-pipe',
      clients: 6,
      channels: 2,
      pipeline: true,
    });
    expect(report.clients).toEqual(expect.objectContaining({ connected: 6, failed: 0 }));
    expect(report.errors.total).toBe(0);
    expect(report.connect.clientsPerSecond).toBeGreaterThan(0);
    expect(report.connect.connectMs).toBeLessThanOrEqual(report.connect.setupMs);
    const kinds = new Map<string, string[]>();
    for (const r of fake.reports.filter((x) => x.client.applicationId === 'sim-pipe')) {
      const list = kinds.get(r.client.clientId) ?? [];
      kinds.set(r.client.clientId, [...list, r.kind === 'connection.state' ? `state:${r.state}` : r.kind]);
    }
    expect(kinds.size).toBe(6);
    for (const list of kinds.values()) {
      expect(list.slice(0, 6)).toEqual([
        'client.register',
        'client.join',
        'connection.open',
        'state:initializing',
        'state:connecting',
        'state:connected',
      ]);
    }

    // A refused register fails the client once, with the register's code; the socket closes 4001.
    const refused = await runSimulation({
      gatewayUrl: gateway.url,
      sharedSecret: 'wrong-secret',
      applicationId: 'sim-pipe',
      clients: 2,
      channels: 1,
      pipeline: true,
    });
    expect(refused.clients).toEqual(expect.objectContaining({ connected: 0, failed: 2 }));
    expect(refused.errors.byCode).toEqual({ TokenInvalid: 2 });
    expect(refused.closes).toEqual({ '4001': 2 });
  });

  it('reports clients the gateway refuses, with the error codes', async () => {
    const report = await runSimulation({
      gatewayUrl: gateway.url,
      sharedSecret: 'wrong-secret',
      applicationId: 'sim-local',
      clients: 2,
      channels: 1,
    });
    expect(report.clients).toEqual(expect.objectContaining({ connected: 0, failed: 2 }));
    expect(report.errors.byCode).toEqual({ TokenInvalid: 2 });
    expect(report.closes).toEqual({ '4001': 2 });
  });

  it('fails to start with a management API that refuses its key', async () => {
    const simulation = new Simulation({
      gatewayUrl: gateway.url,
      managementUrl: management.url,
      apiKey: 'sb_wrong-key-000',
      clients: 1,
    });
    await expect(simulation.start()).rejects.toThrow(/HTTP 401/);
    await simulation.stop();
  });

  describe('command line options', () => {
    it('parses durations, rates and the options of the issue example', () => {
      expect(parseDuration('30s')).toBe(30000);
      expect(parseDuration('2m')).toBe(120000);
      expect(parseDuration('500ms')).toBe(500);
      expect(parseRate('10/s')).toBe(10);
      const { options } = parseArgs(
        [
          '--gateway',
          'ws://127.0.0.1:8080',
          '--management',
          'http://127.0.0.1:8081',
          '--api-key',
          'k',
          '--nats',
          'nats://127.0.0.1:14222',
          '--media-servers',
          '2',
          '--clients',
          '50',
          '--channels',
          '5',
          '--churn',
          '10/s',
          '--duration',
          '30s',
        ],
        {},
      );
      expect(options).toEqual({
        gatewayUrl: 'ws://127.0.0.1:8080',
        managementUrl: 'http://127.0.0.1:8081',
        apiKey: 'k',
        natsUrl: 'nats://127.0.0.1:14222',
        mediaServers: 2,
        clients: 50,
        channels: 5,
        churnPerSecond: 10,
        durationMs: 30000,
      });
      expect(parseArgs(['--gateway=ws://g', '--shared-secret=s', '--application-id=a'], {}).options).toEqual({
        gatewayUrl: 'ws://g',
        sharedSecret: 's',
        applicationId: 'a',
      });
      expect(
        parseArgs(['--gateway', 'ws://g', '--management', 'http://m'], { SB_API_KEY: 'from-env' }).options.apiKey,
      ).toBe('from-env');
    });

    it.each([
      [['--management', 'http://m', '--api-key', 'k'], '--gateway is required'],
      [['--gateway', 'ws://g'], '--management'],
      [['--gateway', 'ws://g', '--management', 'http://m'], '--api-key'],
      [['--gateway', 'ws://g', '--shared-secret', 's', '--application-id', 'a', '--media-servers', '1'], '--nats'],
      [['--gateway', 'ws://g', '--shared-secret', 's', '--application-id', 'a', '--churn', 'fast'], '--churn'],
      [['--gateway', 'ws://g', '--shared-secret', 's', '--application-id', 'a', '--clients', '-1'], '--clients'],
      [['--gateway', 'ws://g', '--colour', 'red'], 'unknown option --colour'],
    ])('refuses %j', (argv, message) => {
      expect(() => parseArgs(argv as string[], {})).toThrow(message);
    });
  });
});
