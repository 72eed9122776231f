/**
 * Interface A reads whose answer is larger than the NATS server's max_payload: runtime-registry
 * sends them in parts, the gateway joins them into one HTTP body. A NATS server of the test's own
 * with a 16 KiB max_payload, the real runtime-registry (its own process) on the jest run's Redis,
 * the gateway in this process, management-api's API key check answered by a stub.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { RuntimeSubjects, Subjects, type ClientRef, type EdgeReport } from '@switchboard/contracts';
import {
  flushRedisPrefix,
  startNatsServer,
  testNamespace,
  testServers,
  type OwnNatsServer,
  type SpawnedService,
} from '@switchboard/testing';
import { startTestGateway, type TestGateway } from '../testing/gateway.testing.js';
import { nestRequest, spawnTestRegistry } from '../testing/registry.testing.js';

const MAX_PAYLOAD = 16 * 1024;
const ORG = 'org-large';
const API_KEY = 'sb_large-answers-key';
/** A key of another organization. */
const OTHER_KEY = 'sb_large-answers-other';
const APP = 'app-large';
const CLIENTS = 30;
const CONNECTIONS_PER_CLIENT = 4;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

describe('interface A answers larger than the NATS max_payload', () => {
  const servers = testServers();
  const ns = testNamespace('gw_large');
  let nats: OwnNatsServer;
  let nc: NatsConnection;
  let registry: SpawnedService;
  let gateway: TestGateway;

  /** A request to the registry in Nest's packet format (what the gateway's edge sends). */
  async function edge(report: EdgeReport): Promise<void> {
    await nestRequest(nc, ns, RuntimeSubjects.edge, { report });
  }

  async function get(path: string, key = API_KEY): Promise<{ status: number; type: string | null; text: string }> {
    const res = await fetch(`${gateway.url}/admin/api/v1.0${path}`, { headers: { 'x-api-key': key } });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  }

  beforeAll(async () => {
    nats = await startNatsServer({ maxPayload: MAX_PAYLOAD });
    nc = await connect({ servers: nats.url });
    // management-api's API key check: this key belongs to ORG.
    nc.subscribe(`${ns}.${Subjects.apiKeyVerify}`, {
      callback: (err, msg) => {
        if (err) return;
        const { id, data } = JSON.parse(decoder.decode(msg.data)) as { id: string; data: { apiKey: string } };
        const organizationId = data.apiKey === API_KEY ? ORG : data.apiKey === OTHER_KEY ? 'org-other' : null;
        const response = organizationId
          ? { valid: true, keyId: `key-${organizationId}`, organizationId, operator: false }
          : { valid: false };
        msg.respond(encoder.encode(JSON.stringify({ id, response, isDisposed: true })));
      },
    });
    registry = await spawnTestRegistry(nats.url, servers.redisUrl, ns);
    gateway = await startTestGateway(nats.url, ns);
    for (let i = 0; i < CLIENTS; i++) {
      const client: ClientRef = {
        applicationId: APP,
        userId: `user-${String(i).padStart(2, '0')}`,
        deviceId: 'device',
        clientId: `client-${i}`,
      };
      await edge({
        kind: 'client.register',
        client: {
          ...client,
          userAlias: `User ${i}`,
          deviceAlias: null,
          tag: 'large',
          roles: ['member'],
          protocol: 'test',
        },
        organizationId: ORG,
        gatewayId: 'gateway-large',
        claims: [{ id: 'room' }],
      });
      await edge({ kind: 'client.join', client, channelId: 'room', claim: { id: 'room' } });
      for (let k = 0; k < CONNECTIONS_PER_CLIENT; k++) {
        await edge({
          kind: 'connection.open',
          client,
          channelId: 'room',
          connectionId: `conn-${k}`,
          type: 'peer',
          tag: `tag-${k}`,
          streams: {
            audio: { direction: 'sendrecv', formats: ['opus/48000/2'] },
            video: { direction: 'sendrecv', formats: ['VP8/90000'] },
          },
        });
      }
    }
  }, 60000);

  afterAll(async () => {
    await gateway?.close();
    await registry?.stop();
    await nc?.close();
    await nats?.stop();
    await flushRedisPrefix(servers.redisUrl, `${ns}:`);
  });

  it('lists every connection of a channel in one body, though the answer is several times max_payload', async () => {
    const reply = await get(`/applications/${APP}/channels/room/connections`);
    expect(reply.status).toBe(200);
    expect(reply.type).toBe('application/json; charset=utf-8');
    expect(Buffer.byteLength(reply.text)).toBeGreaterThan(3 * MAX_PAYLOAD);
    const list = JSON.parse(reply.text) as Array<{
      id: string;
      userId: string;
      clientId: string;
      channelId: string;
      tag: string | null;
    }>;
    const expected = Array.from({ length: CLIENTS }, (_, i) =>
      Array.from({ length: CONNECTIONS_PER_CLIENT }, (_, k) => `user-${String(i).padStart(2, '0')}/conn-${k}`),
    ).flat();
    expect(list.map((c) => `${c.userId}/${c.id}`)).toEqual(expected);
    expect(list.every((c) => c.channelId === 'room' && c.tag === `tag-${c.id.slice(5)}`)).toBe(true);
  });

  it('answers the small reads of the same application as before (one message each)', async () => {
    const snapshot = await get(`/applications/${APP}`);
    expect(snapshot.status).toBe(200);
    expect(JSON.parse(snapshot.text)).toEqual({
      id: APP,
      channelCount: 1,
      userCount: CLIENTS,
      deviceCount: CLIENTS,
      clientCount: CLIENTS,
      connectionCount: CLIENTS * CONNECTIONS_PER_CLIENT,
    });
    const users = JSON.parse((await get(`/applications/${APP}/channels/room/users`)).text) as unknown[];
    expect(users).toHaveLength(CLIENTS);
  });

  it("keeps the documented errors: another organization's key gets 404, an unknown key 401", async () => {
    const other = await get(`/applications/${APP}/channels/room/connections`, OTHER_KEY);
    expect(other.status).toBe(404);
    expect(other.type).toContain('application/problem+json');
    expect(JSON.parse(other.text)).toEqual(expect.objectContaining({ code: 'NotFound', status: 404 }));
    const unknown = await get(`/applications/${APP}/channels/room/connections`, 'sb_unknown-key-000');
    expect(unknown.status).toBe(401);
    expect(unknown.type).toContain('application/problem+json');
  });
});
