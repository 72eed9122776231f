/**
 * Application actions and the management API's NATS side, on the real NATS of the test run:
 * the Token action (HMAC recomputed here), runtime actions forwarded to a fake
 * `runtime-registry.v1.command` responder, `applications.resolve` and `applications.changed`.
 */
import { connect, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { freePort, spawnService, testServers, waitFor } from '@switchboard/testing';
import { createHmac, randomUUID } from 'node:crypto';
import { call, expectODataError } from '../e2e/http.js';
import { q, startManagement, type Harness } from './support.js';

const SECRET = 'shared-secret-for-tokens-Ü';

interface Packet {
  pattern: string;
  data: any;
  id?: string;
}

describe('application actions and NATS', () => {
  let h: Harness;
  let nc: NatsConnection;
  let config: Record<string, any>;
  let applicationId: string;
  const subject = (name: string) => `${h.ns}.${name}`;

  beforeAll(async () => {
    h = await startManagement('actions');
    nc = await connect({ servers: testServers().natsUrl });
    applicationId = `${h.ns}-app`.replace(/_/g, '-');
    config = (await h.api('POST', '/ApplicationConfigs', { body: { applicationId, sharedSecret: SECRET } })).body;
  });
  afterAll(async () => {
    await nc?.close();
    await h?.stop();
  });

  function decode(part: string): any {
    return JSON.parse(Buffer.from(part, 'base64').toString('utf8'));
  }

  describe('Token', () => {
    const claims = {
      userId: 'user-1',
      deviceId: 'device-1',
      clientId: 'client-1',
      clientRoles: ['host'],
      channelClaims: [{ id: 'lobby', canKick: true, disableSendVideo: true, disablePeer: false }],
    };

    it('issues an HS256 client token over standard Base64 as LiveSwitch writes it, signed with the shared secret (HMAC recomputed independently)', async () => {
      const before = Math.floor(Date.now() / 1000);
      const answer = await h.api('POST', `/ApplicationConfigs/${config.id}/Token`, { body: claims });
      const after = Math.floor(Date.now() / 1000);
      expect(answer.status).toBe(200);
      const token = answer.body.value as string;
      expect(Object.keys(answer.body)).toEqual(['value']);
      const parts = token.split('.');
      expect(parts).toHaveLength(3);
      const [header, payload, signature] = parts as [string, string, string];
      for (const part of [header, payload]) {
        expect(part).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
        expect(part.length % 4).toBe(0);
      }
      // The signature without its padding (and without a final A, as the SDK writes it).
      expect(signature).toMatch(/^[A-Za-z0-9+/]{42,43}$/);
      expect(Buffer.from(header, 'base64').toString('utf8')).toBe('{"alg":"HS256","typ":"JWT"}');
      const body = decode(payload);
      // LiveSwitch's key order, channel claims with their action and only their true flags.
      expect(Object.keys(body)).toEqual([
        'iat',
        'exp',
        'type',
        'applicationId',
        'userId',
        'deviceId',
        'clientId',
        'clientRoles',
        'channels',
      ]);
      expect(body).toEqual({
        iat: expect.any(Number),
        exp: body.iat + 120,
        type: 'register',
        applicationId,
        userId: 'user-1',
        deviceId: 'device-1',
        clientId: 'client-1',
        clientRoles: ['host'],
        channels: [{ id: 'lobby', disableSendVideo: true, action: 'join', canKick: true }],
      });
      expect(Object.keys(body.channels[0])).toEqual(['id', 'disableSendVideo', 'action', 'canKick']);
      // Unix seconds, issued during the request.
      expect(body.iat).toBeGreaterThanOrEqual(before);
      expect(body.iat).toBeLessThanOrEqual(after);
      const unpadded = (key: string) =>
        createHmac('sha256', Buffer.from(key, 'utf8'))
          .update(`${header}.${payload}`)
          .digest('base64')
          .replace(/=+$/, '');
      const expected = unpadded(SECRET);
      expect(signature).toBe(expected.endsWith('A') ? expected.slice(0, -1) : expected);
      expect(unpadded('another secret')).not.toContain(signature);
    });

    it('takes an empty claims payload, refuses unknown fields, 404 for an unknown config, 409 for a disabled one', async () => {
      const empty = await h.api('POST', `/ApplicationConfigs/${config.id}/Token`, { body: {} });
      // Absent claims are left out, as LiveSwitch's SDK leaves them out.
      expect(decode(empty.body.value.split('.')[1])).toEqual({
        iat: expect.any(Number),
        exp: expect.any(Number),
        type: 'register',
        applicationId,
      });
      expectODataError(
        await h.api('POST', `/ApplicationConfigs/${config.id}/Token`, { body: { userId: 'u', nope: 1 } }),
        400,
        'ValidationFailed',
        'nope',
      );
      expectODataError(await h.api('POST', `/ApplicationConfigs/${randomUUID()}/Token`, { body: {} }), 404, 'NotFound');
      const disabled = await h.api('POST', '/ApplicationConfigs', {
        body: { applicationId: `${applicationId}-off`, disabled: true },
      });
      expectODataError(
        await h.api('POST', `/ApplicationConfigs/${disabled.body.id}/Token`, { body: {} }),
        409,
        'Conflict',
      );
    });

    it('uses CLIENT_TOKEN_TTL_SECONDS for the expiry', async () => {
      const other = await spawnService('management-api', {
        ...h.env,
        HTTP_PORT: String(await freePort()),
        CLIENT_TOKEN_TTL_SECONDS: '30',
      });
      try {
        const answer = await call('POST', `${other.url}/ApplicationConfigs/${config.id}/Token`, {
          headers: { 'X-API-Key': h.keyA },
          body: { userId: 'u' },
        });
        const payload = decode((answer.body as any).value.split('.')[1]);
        expect(payload.exp - payload.iat).toBe(30);
      } finally {
        await other.stop();
      }
    });
  });

  describe('runtime actions', () => {
    let sub: Subscription | undefined;
    const seen: Packet[] = [];
    const seenHeaders: Array<string | undefined> = [];

    /** `handler` answers a command with its response, `{ err }` for an error, or 'silence' for no answer. */
    function respond(handler: (packet: Packet) => unknown) {
      sub = nc.subscribe(subject('runtime-registry.v1.command'), {
        callback: (_err, msg: Msg) => {
          const packet = JSON.parse(new TextDecoder().decode(msg.data)) as Packet;
          seen.push(packet);
          seenHeaders.push(msg.headers?.get('x-correlation-id'));
          const answer = handler(packet);
          if (answer === 'silence') return;
          const reply =
            answer && typeof answer === 'object' && 'err' in answer
              ? { id: packet.id, err: answer.err, isDisposed: true }
              : { id: packet.id, response: answer ?? null, isDisposed: true };
          msg.respond(JSON.stringify(reply));
        },
      });
    }

    afterEach(async () => {
      sub?.unsubscribe();
      sub = undefined;
      seen.length = 0;
      seenHeaders.length = 0;
      await nc.flush();
    });

    it('forwards every action as its RuntimeCommand with the caller scope and answers 204', async () => {
      respond(() => null);
      await nc.flush();
      const message = { message: 'hello', userAlias: 'ops' };
      const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
        [
          'SendMessage',
          { message },
          { kind: 'message', target: { level: 'application', applicationId }, message, origin: 'api' },
        ],
        [
          'SendUserMessage',
          { message, userId: 'u' },
          { kind: 'message', target: { level: 'user', applicationId, userId: 'u' } },
        ],
        [
          'SendDeviceMessage',
          { message, userId: 'u', deviceId: 'd' },
          { target: { level: 'device', applicationId, userId: 'u', deviceId: 'd' } },
        ],
        [
          'SendClientMessage',
          { message, userId: 'u', deviceId: 'd', clientId: 'c' },
          { target: { level: 'client', applicationId, userId: 'u', deviceId: 'd', clientId: 'c' } },
        ],
        [
          'SendChannelMessage',
          { channelId: 'ch', message },
          { target: { level: 'channel', applicationId, channelId: 'ch' } },
        ],
        [
          'SendChannelUserMessage',
          { channelId: 'ch', userId: 'u', message },
          { target: { level: 'channel.user', applicationId, channelId: 'ch', userId: 'u' } },
        ],
        [
          'SendChannelDeviceMessage',
          { channelId: 'ch', userId: 'u', deviceId: 'd', message },
          { target: { level: 'channel.device', applicationId, channelId: 'ch', userId: 'u', deviceId: 'd' } },
        ],
        [
          'SendChannelClientMessage',
          { channelId: 'ch', userId: 'u', deviceId: 'd', clientId: 'c', message },
          {
            target: {
              level: 'channel.client',
              applicationId,
              channelId: 'ch',
              userId: 'u',
              deviceId: 'd',
              clientId: 'c',
            },
          },
        ],
        [
          'KickChannel',
          { channelId: 'ch' },
          { kind: 'kick', target: { level: 'channel', applicationId, channelId: 'ch' }, origin: 'api' },
        ],
        [
          'KickUser',
          { channelId: 'ch', userId: 'u' },
          { kind: 'kick', target: { level: 'channel.user', applicationId, channelId: 'ch', userId: 'u' } },
        ],
        [
          'KickDevice',
          { channelId: 'ch', userId: 'u', deviceId: 'd' },
          {
            kind: 'kick',
            target: { level: 'channel.device', applicationId, channelId: 'ch', userId: 'u', deviceId: 'd' },
          },
        ],
        [
          'KickClient',
          { channelId: 'ch', userId: 'u', deviceId: 'd', clientId: 'c' },
          {
            kind: 'kick',
            target: {
              level: 'channel.client',
              applicationId,
              channelId: 'ch',
              userId: 'u',
              deviceId: 'd',
              clientId: 'c',
            },
          },
        ],
        [
          'KickConnection',
          { channelId: 'ch', userId: 'u', deviceId: 'd', clientId: 'c', connectionId: 'cn' },
          {
            kind: 'kick',
            target: {
              level: 'connection',
              applicationId,
              channelId: 'ch',
              userId: 'u',
              deviceId: 'd',
              clientId: 'c',
              connectionId: 'cn',
            },
          },
        ],
        [
          'UpdateChannel',
          { channelId: 'ch', config: { recording: true, recordingMode: 'AudioVideo', excludedUserIds: ['x'] } },
          {
            kind: 'update',
            target: {
              level: 'channel',
              applicationId,
              channelId: 'ch',
              patch: { recording: true, recordingMode: 'AudioVideo', excludedUserIds: ['x'] },
            },
          },
        ],
        [
          'UpdateUser',
          { channelId: 'ch', userId: 'u', config: { audioMuted: true } },
          {
            target: { level: 'channel.user', applicationId, channelId: 'ch', userId: 'u', patch: { audioMuted: true } },
          },
        ],
        [
          'UpdateDevice',
          { channelId: 'ch', userId: 'u', deviceId: 'd', config: { videoMuted: false } },
          {
            target: {
              level: 'channel.device',
              applicationId,
              channelId: 'ch',
              userId: 'u',
              deviceId: 'd',
              patch: { videoMuted: false },
            },
          },
        ],
        [
          'UpdateClient',
          {
            channelId: 'ch',
            userId: 'u',
            deviceId: 'd',
            clientId: 'c',
            config: { audioUmuteDisabled: true, recordingTag: 't' },
          },
          {
            target: {
              level: 'channel.client',
              applicationId,
              channelId: 'ch',
              userId: 'u',
              deviceId: 'd',
              clientId: 'c',
              patch: { audioUnmuteDisabled: true, recordingTag: 't' },
            },
          },
        ],
        [
          'UpdateConnection',
          {
            channelId: 'ch',
            userId: 'u',
            deviceId: 'd',
            clientId: 'c',
            connectionId: 'cn',
            config: { videoUnmuteDisabled: true },
          },
          {
            target: {
              level: 'connection',
              applicationId,
              channelId: 'ch',
              userId: 'u',
              deviceId: 'd',
              clientId: 'c',
              connectionId: 'cn',
              patch: { videoUnmuteDisabled: true },
            },
          },
        ],
      ];
      const keys = await h.api('GET', `/ApiKeys?$filter=${encodeURIComponent("tag eq 'bootstrap operator key'")}`);
      const principal = keys.body.value[0].id;
      for (const [action, body, command] of cases) {
        const correlationId = `corr-${action}`;
        const answer = await h.api('POST', `/ApplicationConfigs/${config.id}/${action}`, {
          body,
          headers: { 'X-Correlation-Id': correlationId },
        });
        expect({ action, status: answer.status, text: answer.text }).toEqual({ action, status: 204, text: '' });
        const packet = seen.at(-1)!;
        expect(packet.pattern).toBe('runtime-registry.v1.command');
        // Interface B is organization-scoped: never an operator scope, even for an operator key.
        expect(packet.data.scope).toEqual({ organizationId: h.orgA, operator: false, principal });
        expect(packet.data.command).toEqual(
          expect.objectContaining({ origin: 'api', ...command, target: command.target }),
        );
        expect(seenHeaders.at(-1)).toBe(correlationId);
      }
      expect(seen).toHaveLength(cases.length);
    });

    it("answers the runtime's 404 for an unknown channel or client, and 400 without forwarding for a bad payload", async () => {
      respond((packet) =>
        packet.data.command.target.channelId === 'missing' || packet.data.command.target.clientId === 'gone'
          ? { err: { code: 'NotFound', message: 'No such channel or client' } }
          : null,
      );
      await nc.flush();
      expectODataError(
        await h.api('POST', `/ApplicationConfigs/${config.id}/KickChannel`, { body: { channelId: 'missing' } }),
        404,
        'NotFound',
      );
      expectODataError(
        await h.api('POST', `/ApplicationConfigs/${config.id}/SendClientMessage`, {
          body: { userId: 'u', deviceId: 'd', clientId: 'gone', message: { message: 'x' } },
        }),
        404,
        'NotFound',
      );
      expect(
        (await h.api('POST', `/ApplicationConfigs/${config.id}/KickChannel`, { body: { channelId: 'present' } }))
          .status,
      ).toBe(204);
      const forwarded = seen.length;
      expectODataError(
        await h.api('POST', `/ApplicationConfigs/${config.id}/KickUser`, { body: { channelId: 'ch', userId: null } }),
        400,
        'ValidationFailed',
        'userId',
      );
      expectODataError(
        await h.api('POST', `/ApplicationConfigs/${config.id}/KickUser`, { body: { channelId: 'ch' } }),
        400,
        'ValidationFailed',
        'userId',
      );
      expectODataError(
        await h.api('POST', `/ApplicationConfigs/${config.id}/UpdateChannel`, {
          body: { channelId: 'ch', config: { bogus: true } },
        }),
        400,
        'ValidationFailed',
        'config.bogus',
      );
      expectODataError(
        await h.api('POST', `/ApplicationConfigs/${randomUUID()}/KickChannel`, { body: { channelId: 'ch' } }),
        404,
        'NotFound',
      );
      expectODataError(await h.api('POST', `/ApplicationConfigs/${config.id}/Explode`, { body: {} }), 404, 'NotFound');
      expect(seen).toHaveLength(forwarded);
    });

    it('answers 503 when no runtime answers and 504 when it does not answer in time', async () => {
      expectODataError(
        await h.api('POST', `/ApplicationConfigs/${config.id}/KickChannel`, { body: { channelId: 'ch' } }),
        503,
        'Unavailable',
      );
      respond(() => 'silence');
      await nc.flush();
      expectODataError(
        await h.api('POST', `/ApplicationConfigs/${config.id}/KickChannel`, { body: { channelId: 'ch' } }),
        504,
        'Timeout',
      );
    });
  });

  describe('NATS responders and events', () => {
    async function request(name: string, data: unknown): Promise<{ response?: any; err?: any }> {
      const msg = await nc.request(subject(name), JSON.stringify({ pattern: name, data, id: randomUUID() }), {
        timeout: 5000,
      });
      return JSON.parse(new TextDecoder().decode(msg.data));
    }

    it('resolves an application id to its owner, config and shared secret; NotFound otherwise', async () => {
      const reply = await request('management-api.v1.applications.resolve', { applicationId });
      expect(reply.err ?? null).toBeNull();
      expect(reply.response).toEqual({
        applicationId,
        applicationConfigId: config.id,
        organizationId: h.orgA,
        sharedSecret: SECRET,
        disabled: false,
        organizationDisabled: false,
      });
      const missing = await request('management-api.v1.applications.resolve', { applicationId: 'no-such-app' });
      expect(missing.err).toEqual(expect.objectContaining({ code: 'NotFound' }));
    });

    it('resolves the webhooks of an event: application webhooks, then those of the governing channel config', async () => {
      const app = await h.api('POST', '/ApplicationConfigs', {
        body: {
          applicationId: `${applicationId}-hooks`,
          sharedSecret: 'hooks-secret',
          webhooks: [
            { name: 'app-hook', url: 'https://example.com/app', events: ['client.registered'], reliable: true },
          ],
        },
      });
      const star = await h.api('POST', '/ChannelConfigs', {
        body: {
          applicationConfigId: app.body.id,
          channelIdPattern: '*',
          webhooks: [{ name: 'star', url: 'https://example.com/star' }],
        },
      });
      const lobby = await h.api('POST', '/ChannelConfigs', {
        body: {
          applicationConfigId: app.body.id,
          channelIdPattern: 'lobby',
          webhooks: [{ name: 'lobby', url: 'https://example.com/lobby', batch: true }],
        },
      });
      const urgent = await h.api('POST', '/ChannelConfigs', {
        body: {
          applicationConfigId: app.body.id,
          channelIdPattern: '*',
          priority: 10,
          webhooks: [{ name: 'urgent', url: 'https://example.com/urgent' }],
        },
      });
      expect([star.status, lobby.status, urgent.status]).toEqual([201, 201, 201]);
      const hooks = (await h.api('GET', `/ApplicationWebhooks${q({ applicationConfigId: app.body.id })}`)).body.value;

      const inLobby = await request('management-api.v1.webhooks.resolve', {
        applicationId: `${applicationId}-hooks`,
        channelId: 'lobby',
      });
      expect(inLobby.err ?? null).toBeNull();
      expect(inLobby.response).toEqual({
        organizationId: h.orgA,
        sharedSecret: 'hooks-secret',
        channelConfigId: urgent.body.id,
        webhooks: [
          {
            id: hooks[0].id,
            source: 'application',
            url: 'https://example.com/app',
            events: ['client.registered'],
            batch: false,
            reliable: true,
            disabled: false,
          },
          {
            id: expect.any(String),
            source: 'channel',
            url: 'https://example.com/urgent',
            events: null,
            batch: false,
            reliable: false,
            disabled: false,
          },
        ],
      });
      await h.api('PATCH', `/ChannelConfigs/${urgent.body.id}`, { body: { priority: 0 } });
      const specific = await request('management-api.v1.webhooks.resolve', {
        applicationId: `${applicationId}-hooks`,
        channelId: 'lobby',
      });
      expect(specific.response.channelConfigId).toBe(lobby.body.id);
      expect(specific.response.webhooks.map((w: any) => w.url)).toEqual([
        'https://example.com/app',
        'https://example.com/lobby',
      ]);
      const outside = await request('management-api.v1.webhooks.resolve', {
        applicationId: `${applicationId}-hooks`,
        channelId: null,
      });
      expect(outside.response.channelConfigId).toBeNull();
      expect(outside.response.webhooks).toHaveLength(1);
      await h.api('PATCH', `/ApplicationConfigs/${app.body.id}`, { body: { disabled: true } });
      expect(
        (
          await request('management-api.v1.webhooks.resolve', {
            applicationId: `${applicationId}-hooks`,
            channelId: 'lobby',
          })
        ).response.webhooks,
      ).toEqual([]);
      expect(
        (await request('management-api.v1.webhooks.resolve', { applicationId: 'nobody', channelId: null })).err,
      ).toEqual(expect.objectContaining({ code: 'NotFound' }));
      expect((await request('management-api.v1.webhooks.resolve', { applicationId: '' })).err).toEqual(
        expect.objectContaining({ code: 'ValidationFailed' }),
      );
    });

    it('publishes applications.changed after a change under an application config commits', async () => {
      const events: Packet[] = [];
      const sub = nc.subscribe(subject('management-api.v1.applications.changed'), {
        callback: (_e, msg) => {
          events.push(JSON.parse(new TextDecoder().decode(msg.data)) as Packet);
        },
      });
      await nc.flush();
      try {
        expect(
          (await h.api('PATCH', `/ApplicationConfigs/${config.id}`, { body: { sharedSecret: `${SECRET}-rotated` } }))
            .status,
        ).toBe(200);
        await waitFor(() => events.some((e) => e.data.applicationId === applicationId), {
          description: 'the changed event',
        });
        expect(events[0]).toEqual({ pattern: 'management-api.v1.applications.changed', data: { applicationId } });
        const resolved = await request('management-api.v1.applications.resolve', { applicationId });
        expect(resolved.response.sharedSecret).toBe(`${SECRET}-rotated`);

        events.length = 0;
        const renamed = `${applicationId}-renamed`;
        expect(
          (await h.api('PATCH', `/ApplicationConfigs/${config.id}`, { body: { applicationId: renamed } })).status,
        ).toBe(200);
        await waitFor(() => events.length >= 2, { description: 'both changed events' });
        const byText = (a: string, b: string) => a.localeCompare(b);
        expect(events.map((e) => e.data.applicationId).sort(byText)).toEqual([applicationId, renamed].sort(byText));

        events.length = 0;
        const channel = await h.api('POST', '/ChannelConfigs', {
          body: { applicationConfigId: config.id, channelIdPattern: '*' },
        });
        expect(channel.status).toBe(201);
        await waitFor(() => events.some((e) => e.data.applicationId === renamed), {
          description: 'the changed event of a channel config',
        });

        events.length = 0;
        expect(
          (await h.api('PATCH', `/ApplicationConfigs/${config.id}`, { body: { applicationId: 'has space' } })).status,
        ).toBe(400);
        expect((await h.api('POST', '/ApiKeys', { body: { tag: 'unrelated' } })).status).toBe(201);
        await nc.flush();
        expect(events).toEqual([]);
      } finally {
        sub.unsubscribe();
      }
    });
  });
});
