// The media benchmark's "control-plane" controller: the real product path. Each publisher and each
// subscriber is a client of its own that registers over `/sync` with a token of the management API's
// Token action, joins the channel (the room), opens an sfu connection (placed by runtime-registry on
// the agent's media server) and signals through admin-gateway, which calls the media-agent. Operator
// mutes go through interface A (connection level); the registry commands the agent (`moderate`).
import { SyncClient } from '../../tools/simulator/src/index.mjs';

const APPLICATION_ID = 'bench-media';

async function call(method, url, apiKey, body) {
  const headers = { 'x-api-key': apiKey };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** Starts management-api, runtime-registry and admin-gateway; resolves once the agent's server is active. */
export async function startControlPlane(env, mediaServerId, registryEnv = {}) {
  const { apiKey } = await env.bootstrap();
  const management = await env.startService('management-api');
  await env.startService('runtime-registry', registryEnv);
  const gateway = await env.startService('admin-gateway');
  const config = await call('POST', `${management.url}/ApplicationConfigs`, apiKey, {
    applicationId: APPLICATION_ID,
    tag: 'bench',
  });
  const adminApi = `${gateway.url}/admin/api/v1.0`;
  // Placement needs the agent's heartbeat heard by the registry.
  for (let i = 0; ; i++) {
    const servers = await call('GET', `${adminApi}/mediaservers`, apiKey);
    if (servers.some((server) => server.id === mediaServerId && server.active)) break;
    if (i > 150) throw new Error(`media server ${mediaServerId} not listed active`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { apiKey, adminApi, syncUrl: `${gateway.url.replace('http', 'ws')}/sync`, management, configId: config.id };
}

// One user per connection, named after its room too (the rooms of the phases reuse connection ids).
const identity = (room, id) => ({
  userId: `${room}-${id}`,
  deviceId: `${room}-${id}-device`,
  clientId: `${room}-${id}-client`,
});

/** The controller over a started control plane (`startControlPlane`). */
export function controlPlaneController({ apiKey, adminApi, syncUrl, management, configId }) {
  const tokens = new Map();
  /** Every client of a room, by connection id (one connection per client). */
  const rooms = new Map();
  const mint = (room, id) =>
    call('POST', `${management.url}/ApplicationConfigs/${configId}/Token`, apiKey, {
      ...identity(room, id),
      channelClaims: [{ id: room }],
    }).then((token) => token.value);

  /** Registers a client over /sync and joins it to the room's channel; opens its sfu connection. */
  async function open(room, id, extra) {
    const token = tokens.get(`${room}/${id}`) ?? (await mint(room, id));
    tokens.delete(`${room}/${id}`);
    const sync = await SyncClient.connect(syncUrl, { requestTimeoutMs: 30000 });
    rooms.get(room).set(id, sync);
    // A renegotiation of the media server (a subscriber whose publisher changed) is not expected here.
    sync.onPush(() => {});
    await sync.request('register', { token });
    await sync.request('join', { channelId: room });
    await sync.request('connection.open', { channelId: room, connectionId: id, type: 'sfu', ...extra });
    for (const state of ['initializing', 'connecting'])
      await sync.request('connection.state', { connectionId: id, state });
    return sync;
  }

  return {
    name: 'control-plane',
    async createRoom(room) {
      rooms.set(room, new Map());
    },
    /** Mints the client's token ahead (a client has its token before it joins). */
    async prepare(room, id) {
      tokens.set(`${room}/${id}`, await mint(room, id));
    },
    async publish(room, id, offer) {
      const sync = await open(room, id, {
        streams: {
          audio: { direction: 'sendonly', formats: ['opus/48000/2'] },
          video: { direction: 'sendonly', formats: ['VP8/90000'] },
        },
      });
      // The offer holds every candidate (gathered before it is sent): no trickle.
      return (await sync.request('connection.offer', { connectionId: id, offer })).answer;
    },
    async subscribe(room, id, publisherId) {
      const sync = await open(room, id, {
        remoteConnectionId: publisherId,
        streams: { audio: { direction: 'recvonly' }, video: { direction: 'recvonly' } },
      });
      return (await sync.request('connection.subscribe', { connectionId: id })).offer;
    },
    answer: (room, id, answer) => rooms.get(room).get(id).request('connection.answer', { connectionId: id, answer }),
    mute: (room, publisherId, muted) => {
      const { userId, deviceId, clientId } = identity(room, publisherId);
      const path = `/applications/${APPLICATION_ID}/channels/${room}/users/${userId}/devices/${deviceId}/clients/${clientId}/connections/${publisherId}`;
      return call('PATCH', `${adminApi}${path}`, apiKey, { audioMuted: muted });
    },
    async destroyRoom(room) {
      // Unregistering closes the client's connections at once, which frees their media.
      await Promise.all(
        [...rooms.get(room).values()].map((sync) =>
          sync
            .request('unregister')
            .catch(() => {})
            .finally(() => sync.terminate()),
        ),
      );
      rooms.delete(room);
    },
    async close() {
      for (const room of rooms.keys()) await this.destroyRoom(room);
    },
  };
}
