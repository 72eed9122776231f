/**
 * The interface A recording routes against a fake recording-service on the real NATS: each route
 * sends exactly its query or command kind with validated path and query parameters, answers 200
 * with the service's answer or 204, and refuses bad parameters with a Problem naming them.
 */
import { connect, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { RecordingSubjects } from '@switchboard/contracts';
import { testNamespace, testServers } from '@switchboard/testing';
import { startFakeRuntime, OPERATOR_KEY, OPERATOR_SCOPE, type FakeRuntime } from '../testing/fake-runtime.testing.js';
import { startTestGateway, type TestGateway } from '../testing/gateway.testing.js';
import { RECORDING_ROUTES } from './recording-routes.js';

const IDS: Record<string, string> = {
  applicationId: 'app-1',
  channelId: 'room-1',
  userId: 'user-1',
  deviceId: 'device-1',
  clientId: 'client-1',
  connectionId: 'conn-1',
  channelRecordingId: '3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b',
  connectionRecordingId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
};

const concrete = (path: string) => path.replace(/:([A-Za-z]+)/g, (_, name: string) => IDS[name]!);

describe('interface A recording routes', () => {
  const servers = testServers();
  const ns = testNamespace('gw_rec');
  let fake: FakeRuntime;
  let gateway: TestGateway;
  let nc: NatsConnection;
  const seen: Array<{ subject: string; data: any }> = [];
  let answer: unknown = null;

  beforeAll(async () => {
    fake = await startFakeRuntime(servers.natsUrl, ns);
    gateway = await startTestGateway(servers.natsUrl, ns);
    nc = await connect({ servers: servers.natsUrl });
    for (const subject of [RecordingSubjects.query, RecordingSubjects.command]) {
      nc.subscribe(`${ns}.${subject}`, {
        callback: (_err, msg: Msg) => {
          const packet = JSON.parse(new TextDecoder().decode(msg.data)) as { id: string; data: unknown };
          seen.push({ subject, data: packet.data });
          msg.respond(
            JSON.stringify({
              id: packet.id,
              response: subject === RecordingSubjects.command ? null : answer,
              isDisposed: true,
            }),
          );
        },
      });
    }
  });

  afterAll(async () => {
    await nc?.close();
    await gateway?.close();
    await fake?.close();
  });

  beforeEach(() => {
    seen.length = 0;
    answer = { answered: true };
  });

  async function call(method: string, path: string, body?: unknown) {
    const res = await fetch(`${gateway.url}/admin/api/v1.0/${path}`, {
      method,
      headers: { 'x-api-key': OPERATOR_KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  it.each(RECORDING_ROUTES.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))(
    '%s sends its kind with every path parameter',
    async (_label, route) => {
      const body = route.method === 'patch' ? { expiryTimestamp: '2030-01-01T00:00:00Z' } : undefined;
      const reply = await call(route.method.toUpperCase(), concrete(route.path), body);
      const params = Object.fromEntries(
        [...route.path.matchAll(/:([A-Za-z]+)/g)].map(([, name]) => [name!, IDS[name!]]),
      );
      if (route.method === 'get') {
        expect(reply).toEqual({ status: 200, body: { answered: true } });
        expect(seen).toEqual([
          { subject: RecordingSubjects.query, data: { scope: OPERATOR_SCOPE, query: { kind: route.kind, ...params } } },
        ]);
      } else {
        expect(reply.status).toBe(204);
        expect(seen).toEqual([
          {
            subject: RecordingSubjects.command,
            data: { scope: OPERATOR_SCOPE, command: { kind: route.kind, ...params, ...(body ? { patch: body } : {}) } },
          },
        ]);
      }
    },
  );

  it('answers string reads as a JSON string', async () => {
    answer = 'https://files.example/x?sig=1';
    const res = await fetch(
      `${gateway.url}/admin/api/v1.0/${concrete('applications/:applicationId/channels/:channelId/recordings/:channelRecordingId/url')}`,
      { headers: { 'x-api-key': OPERATOR_KEY } },
    );
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.text()).toBe('"https://files.example/x?sig=1"');
  });

  it('passes the window and paging parameters as integers', async () => {
    answer = [];
    const reply = await call('GET', 'applications/app-1/recordings?timestampMin=100&timestampMax=200&skip=5&take=10');
    expect(reply).toEqual({ status: 200, body: [] });
    expect(seen[0]!.data.query).toEqual({
      kind: 'channelRecordings.list',
      applicationId: 'app-1',
      timestampMin: 100,
      timestampMax: 200,
      skip: 5,
      take: 10,
    });
    answer = 3;
    expect(await call('GET', 'applications/app-1/channels/room-1/recordings/count?timestampMin=1')).toEqual({
      status: 200,
      body: 3,
    });
  });

  it.each([
    ['applications/app-1/recordings?take=1001', 'take'],
    ['applications/app-1/recordings?skip=-1', 'skip'],
    ['applications/app-1/recordings?timestampMin=abc', 'timestampMin'],
    ['applications/app-1/recordings?timestampMin=200&timestampMax=100', 'timestampMax'],
    ['applications/app-1/channels/room-1/recordings/not-a-uuid', 'channelRecordingId'],
    [
      `applications/app-1/channels/room-1/users/u/devices/d/clients/c/connections/x/recordings/nope`,
      'connectionRecordingId',
    ],
  ])('refuses %s naming %s', async (path, field) => {
    const reply = await call('GET', path);
    expect(reply.status).toBe(400);
    expect(reply.body.errors).toEqual([expect.objectContaining({ field })]);
    expect(seen).toEqual([]);
  });

  it('refuses a bad expiry patch naming the field', async () => {
    const reply = await call(
      'PATCH',
      concrete(`applications/:applicationId/channels/:channelId/recordings/:channelRecordingId`),
      { expiryTimestamp: 'tomorrow' },
    );
    expect(reply.status).toBe(400);
    expect(reply.body.errors.map((e: { field: string }) => e.field)).toEqual(['expiryTimestamp']);
    expect(seen).toEqual([]);
  });

  it('documents every recording route in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${gateway.url}/admin/api/v1.0/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    for (const route of RECORDING_ROUTES) {
      const path = `/admin/api/v1.0/${route.path.replace(/:([A-Za-z]+)/g, '{$1}')}`;
      expect(doc.paths[path]?.[route.method]).toEqual(expect.objectContaining({ summary: route.summary }));
    }
  });
});
