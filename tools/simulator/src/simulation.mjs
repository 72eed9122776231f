// The simulator's core: an application, M fake media servers, N clients (SDK `Client`s over the
// real /sync socket) across K channels, each joining and walking an sfu connection to `connected`,
// then join / leave / mute churn at a given rate, and a JSON report of what happened.
import { connect as connectNats } from '@nats-io/transport-node';
import { randomBytes, randomUUID } from 'node:crypto';
import { OperationStats } from './latency.mjs';
import { FakeMediaServer } from './media-server.mjs';
import { SimulatedClients, watchTransport } from './sdk-socket.mjs';
import { ManagementClient, TokenSource } from './tokens.mjs';

export const DEFAULTS = Object.freeze({
  clients: 10,
  channels: 2,
  mediaServers: 0,
  churnPerSecond: 0,
  durationMs: 0,
  namespace: 'sb',
  connectionType: 'sfu',
  concurrency: 50,
  requestTimeoutMs: 10000,
  heartbeatIntervalMs: 2000,
  channelPrefix: 'sim-ch',
  region: null,
  pipeline: false,
});

const CONNECT_PATH = ['initializing', 'connecting', 'connected'];
const MAX_ERROR_SAMPLES = 20;

/** `ws://host:port/sync` from `ws://host:port`, `http://host:port` or a full /sync URL. */
export function syncUrlOf(gateway) {
  const url = new URL(gateway);
  if (url.protocol === 'http:') url.protocol = 'ws:';
  if (url.protocol === 'https:') url.protocol = 'wss:';
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/sync';
  return url.toString();
}

/** Resolves when `promise` settles or after `ms`, whichever is first (the timer does not outlive it). */
function within(promise, ms) {
  let timer;
  return Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() =>
    clearTimeout(timer),
  );
}

async function pool(items, concurrency, fn) {
  const queue = [...items];
  const workers = Array.from({ length: Math.max(1, Math.min(concurrency, queue.length)) }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item);
  });
  await Promise.all(workers);
}

export class Simulation {
  /** @param {import('./index.mjs').SimulationOptions} options */
  constructor(options) {
    this.options = { ...DEFAULTS, ...options };
    if (!this.options.gatewayUrl) throw new Error('gatewayUrl is required');
    if (!this.options.managementUrl && !this.options.sharedSecret)
      throw new Error('either managementUrl (with apiKey) or sharedSecret (with applicationId) is required');
    if (this.options.managementUrl && !this.options.apiKey) throw new Error('apiKey is required with managementUrl');
    if (this.options.mediaServers > 0 && !this.options.natsUrl)
      throw new Error('natsUrl is required to start media servers');
    if (!['sfu', 'mcu', 'peer'].includes(this.options.connectionType))
      throw new Error('connectionType must be sfu, mcu or peer');
    this.runId = randomBytes(4).toString('hex');
    this.syncUrl = syncUrlOf(this.options.gatewayUrl);
    this.stats = new OperationStats();
    this.log = this.options.log ?? (() => {});
    this.clients = [];
    this.mediaServers = [];
    this.application = null;
    this.nc = null;
    this.errors = { total: 0, byCode: {}, samples: [] };
    this.pushes = { received: 0, byType: {} };
    this.closes = {};
    this.churnCounts = { requested: 0, performed: 0, failed: 0, skipped: 0, byAction: { join: 0, leave: 0, mute: 0 } };
    this.timeline = { startedAt: null, connectedAt: null, churnStartedAt: null, churnEndedAt: null, finishedAt: null };
    this.setupMs = 0;
    this.stopped = false;
  }

  get channelIds() {
    return Array.from({ length: this.options.channels }, (_, k) => `${this.options.channelPrefix}-${k}`);
  }

  error(op, e) {
    const code = e?.code ?? e?.name ?? 'Error';
    this.errors.total++;
    this.errors.byCode[code] = (this.errors.byCode[code] ?? 0) + 1;
    if (this.errors.samples.length < MAX_ERROR_SAMPLES)
      this.errors.samples.push({ op, code, message: String(e?.message ?? e) });
  }

  async setUpApplication() {
    const o = this.options;
    const applicationId = o.applicationId ?? `sim-${this.runId}`;
    if (o.managementUrl) {
      const management = new ManagementClient({
        url: o.managementUrl,
        apiKey: o.apiKey,
        timeoutMs: o.requestTimeoutMs,
      });
      const app = o.applicationConfigId
        ? { applicationConfigId: o.applicationConfigId, applicationId, created: false }
        : await this.stats.time('application.ensure', () => management.ensureApplication(applicationId));
      this.application = app;
      this.tokens = new TokenSource({ management, applicationConfigId: app.applicationConfigId, applicationId });
    } else {
      this.application = { applicationConfigId: null, applicationId, created: false };
      this.tokens = new TokenSource({ applicationId, sharedSecret: o.sharedSecret });
    }
    this.log({ event: 'application', ...this.application });
  }

  async startMediaServers() {
    const o = this.options;
    if (o.mediaServers <= 0) return;
    this.nc = await connectNats({ servers: o.natsUrl, name: `simulator-${this.runId}` });
    for (let i = 0; i < o.mediaServers; i++) {
      this.mediaServers.push(
        new FakeMediaServer({
          nc: this.nc,
          namespace: o.namespace,
          index: i,
          region: o.region,
          heartbeatIntervalMs: o.heartbeatIntervalMs,
          capacity: o.mediaServerCapacity ?? 1000,
        }).start(),
      );
    }
    await this.nc.flush();
    this.log({ event: 'media-servers', ids: this.mediaServers.map((m) => m.id) });
  }

  newClient(index) {
    const channels = this.channelIds;
    return {
      index,
      userId: `sim-u-${this.runId}-${index}`,
      deviceId: `sim-d-${this.runId}-${index}`,
      clientId: `sim-c-${this.runId}-${index}`,
      home: channels[index % channels.length],
      session: null,
      transport: null,
      transportClosed: null,
      token: null,
      state: 'new',
      busy: false,
      /** channelId -> connectionId */
      channels: new Map(),
      /** connectionId -> { channelId, audioMuted } */
      connections: new Map(),
    };
  }

  /** Gets the client's token (from the management API, or signed locally). */
  mintToken(c) {
    return this.stats.time('token', () =>
      this.tokens.token({
        userId: c.userId,
        deviceId: c.deviceId,
        clientId: c.clientId,
        clientRoles: ['simulated'],
        channelIds: this.channelIds,
      }),
    );
  }

  /** Mints the token of a client ahead of connecting it; a failure fails the client. */
  async prepareClient(c) {
    try {
      c.token = await this.mintToken(c);
    } catch (e) {
      c.state = 'failed';
      this.error('client.connect', e);
    }
  }

  async connectClient(c) {
    if (c.state === 'failed') return;
    const started = performance.now();
    try {
      const token = c.token ?? (await this.mintToken(c));
      c.token = null;
      c.session = this.newSession(c);
      if (this.options.pipeline) await this.connectPipelined(c, token);
      else {
        await this.stats.time('register', () => this.sessions.register(c, c.session, token));
        c.state = 'registered';
        await this.joinAndConnect(c, c.home);
      }
      c.state = 'connected';
      this.stats.record('client.connect', performance.now() - started);
    } catch (e) {
      c.state = 'failed';
      this.error('client.connect', e);
      c.session?.close();
      // A refused register is followed by the gateway's close (4001, 4002, 4003): let it arrive.
      if (c.transport) {
        await within(c.transportClosed, 2000);
        c.transport.terminate();
      }
    }
  }

  /** The simulated client's SDK client, its pushes counted. */
  newSession(c) {
    this.sessions ??= new SimulatedClients({
      url: this.syncUrl,
      requestTimeoutMs: this.options.requestTimeoutMs,
      onTransport: (owner, transport) => {
        owner.transport = transport;
        owner.transportClosed = watchTransport(transport, {
          opened: (ms) => this.stats.record('socket.open', ms),
          closed: (code) => (this.closes[code] = (this.closes[code] ?? 0) + 1),
        });
      },
    });
    const session = this.sessions.create(c.index);
    session.on('push', (push) => this.pushed(c, push));
    session.on('closed', ({ code }) => {
      if (c.state !== 'unregistered' && c.state !== 'failed') c.state = code === 1000 ? 'unregistered' : 'closed';
    });
    return session;
  }

  pushed(c, push) {
    this.pushes.received++;
    this.pushes.byType[push.type] = (this.pushes.byType[push.type] ?? 0) + 1;
    if (push.type === 'kicked') {
      if (push.connectionId) c.connections.delete(push.connectionId);
      else {
        c.channels.delete(push.channelId);
        for (const [id, conn] of c.connections) if (conn.channelId === push.channelId) c.connections.delete(id);
      }
    }
    if (push.type === 'unregistered') c.state = 'unregistered';
  }

  openRequest(channelId) {
    return {
      channelId,
      type: this.options.connectionType,
      tag: 'simulator',
      streams: {
        audio: { direction: 'sendrecv', formats: ['opus/48000/2'] },
        video: { direction: 'sendrecv', formats: ['VP8/90000'], maxPixelCount: 640 * 480 },
      },
    };
  }

  /**
   * register, join, connection.open (with a connection id of the client's choosing) and the states
   * up to `connected`, sent at once (register's `pipelined` callback; one write): the gateway runs a
   * socket's requests one after the other in the order sent (docs/sync-protocol.md), so the client
   * need not wait between them. A refused register fails the others; the first failure is reported.
   */
  async connectPipelined(c, token) {
    const channelId = c.home;
    const connectionId = randomUUID();
    const timed = (name, type, data) => this.stats.time(name, () => c.session.request(type, data));
    let requests = [];
    const pipelined = () => {
      requests = [
        this.stats.time('join', () => c.session.join(channelId)),
        timed('connection.open', 'connection.open', { ...this.openRequest(channelId), connectionId }),
        ...CONNECT_PATH.map((state) => timed('connection.state', 'connection.state', { connectionId, state })),
      ];
      // Handled here: a refused register fails them before they are awaited.
      for (const request of requests) request.catch(() => undefined);
    };
    await this.stats.time('register', () => this.sessions.register(c, c.session, token, pipelined));
    c.state = 'registered';
    const failed = (await Promise.allSettled(requests)).find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    c.channels.set(channelId, connectionId);
    c.connections.set(connectionId, { channelId, audioMuted: false });
  }

  async joinAndConnect(c, channelId) {
    await this.stats.time('join', () => c.session.join(channelId));
    c.channels.set(channelId, null);
    const opened = await this.stats.time('connection.open', () =>
      c.session.request('connection.open', this.openRequest(channelId)),
    );
    c.channels.set(channelId, opened.connectionId);
    c.connections.set(opened.connectionId, { channelId, audioMuted: false });
    for (const state of CONNECT_PATH)
      await this.stats.time('connection.state', () =>
        c.session.request('connection.state', { connectionId: opened.connectionId, state }),
      );
  }

  /**
   * Creates the application, starts the media servers, gets every client's token, then connects
   * every client. Minting tokens (the management API's work, or local signing) is done before the
   * connect phase, so `connect.clientsPerSecond` is the rate of register + join + connect alone.
   */
  async start() {
    this.timeline.startedAt = new Date().toISOString();
    const started = performance.now();
    await this.setUpApplication();
    await this.startMediaServers();
    this.clients = Array.from({ length: this.options.clients }, (_, i) => this.newClient(i));
    const tokensStarted = performance.now();
    await pool(this.clients, this.options.concurrency, (c) => this.prepareClient(c));
    this.tokensMs = performance.now() - tokensStarted;
    this.log({ event: 'tokens', clients: this.clients.filter((c) => c.token).length, ms: Math.round(this.tokensMs) });
    const connectStarted = performance.now();
    await pool(this.clients, this.options.concurrency, (c) => this.connectClient(c));
    this.connectMs = performance.now() - connectStarted;
    this.setupMs = performance.now() - started;
    this.timeline.connectedAt = new Date().toISOString();
    this.log({
      event: 'connected',
      clients: this.clients.filter((c) => c.state === 'connected').length,
      ms: Math.round(this.setupMs),
    });
    return this;
  }

  pickClient() {
    const live = this.clients.filter(
      (c) => !c.busy && c.session?.state === 'registered' && (c.state === 'connected' || c.state === 'registered'),
    );
    return live.length ? live[Math.floor(Math.random() * live.length)] : undefined;
  }

  chooseAction(c) {
    const roll = Math.random();
    const all = this.channelIds;
    const canJoin = c.channels.size < all.length;
    const canLeave = c.channels.size > 0;
    const canMute = c.connections.size > 0;
    if (roll < 1 / 3 && canMute) return 'mute';
    if (roll < 2 / 3 && canLeave) return 'leave';
    if (canJoin) return 'join';
    return canLeave ? 'leave' : canMute ? 'mute' : undefined;
  }

  async churnOnce() {
    this.churnCounts.requested++;
    const c = this.pickClient();
    const action = c && this.chooseAction(c);
    if (!c || !action) {
      this.churnCounts.skipped++;
      return;
    }
    c.busy = true;
    try {
      if (action === 'mute') {
        const [connectionId, conn] = [...c.connections][Math.floor(Math.random() * c.connections.size)];
        const muted = !conn.audioMuted;
        await this.stats.time('connection.update', () =>
          c.session.request('connection.update', { connectionId, localAudioMuted: muted }),
        );
        conn.audioMuted = muted;
      } else if (action === 'leave') {
        const channels = [...c.channels.keys()];
        const channelId = channels[Math.floor(Math.random() * channels.length)];
        await this.stats.time('leave', () => c.session.leave(channelId));
        const connectionId = c.channels.get(channelId);
        c.channels.delete(channelId);
        if (connectionId) c.connections.delete(connectionId);
      } else {
        const free = this.channelIds.filter((id) => !c.channels.has(id));
        await this.joinAndConnect(c, free[Math.floor(Math.random() * free.length)]);
      }
      this.churnCounts.performed++;
      this.churnCounts.byAction[action]++;
    } catch (e) {
      this.churnCounts.failed++;
      this.error(`churn.${action}`, e);
    } finally {
      c.busy = false;
    }
  }

  /**
   * Applies churn at `churnPerSecond` for `durationMs` (or until `signal` aborts); waits for the operations in flight.
   */
  async churn(durationMs = this.options.durationMs) {
    this.timeline.churnStartedAt = new Date().toISOString();
    const rate = this.options.churnPerSecond;
    const inFlight = new Set();
    const started = performance.now();
    let last = started;
    let budget = 0;
    const signal = this.options.signal;
    while (performance.now() - started < durationMs && !signal?.aborted) {
      await new Promise((r) => setTimeout(r, Math.min(50, Math.max(1, durationMs - (performance.now() - started)))));
      const now = performance.now();
      budget += (rate * (now - last)) / 1000;
      last = now;
      while (budget >= 1) {
        budget--;
        const op = this.churnOnce().finally(() => inFlight.delete(op));
        inFlight.add(op);
      }
    }
    await Promise.all(inFlight);
    this.churnMs = performance.now() - started;
    this.timeline.churnEndedAt = new Date().toISOString();
  }

  /** Unregisters every client (closing its socket), stops the media servers. */
  async stop() {
    if (this.stopped) return;
    this.stopped = true;
    await pool(
      this.clients.filter((c) => c.session?.state === 'registered'),
      this.options.concurrency,
      async (c) => {
        try {
          await this.stats.time('unregister', () => c.session.unregister());
          c.state = 'unregistered';
        } catch (e) {
          this.error('unregister', e);
        }
        await within(c.transportClosed, 2000);
        c.transport.terminate();
      },
    );
    for (const m of this.mediaServers) m.stop();
    if (this.nc) await this.nc.drain().catch(() => {});
    this.timeline.finishedAt = new Date().toISOString();
  }

  report() {
    const o = this.options;
    const states = {};
    for (const c of this.clients) states[c.state] = (states[c.state] ?? 0) + 1;
    const connected = this.clients.filter((c) => c.channels.size > 0 || c.state === 'connected').length;
    const everConnected = this.stats.summary()['client.connect']?.count ?? 0;
    return {
      runId: this.runId,
      timeline: this.timeline,
      config: {
        gateway: this.syncUrl,
        management: o.managementUrl ?? null,
        nats: o.natsUrl ?? null,
        namespace: o.namespace,
        clients: o.clients,
        channels: o.channels,
        mediaServers: o.mediaServers,
        churnPerSecond: o.churnPerSecond,
        durationMs: o.durationMs,
        connectionType: o.connectionType,
        concurrency: o.concurrency,
      },
      application: this.application,
      mediaServers: this.mediaServers.map((m) => ({
        id: m.id,
        region: m.region,
        capacity: m.capacity,
        heartbeats: m.heartbeats,
      })),
      clients: {
        requested: o.clients,
        connected: everConnected,
        failed: this.clients.filter((c) => c.state === 'failed').length,
        inChannelsAtEnd: connected,
        finalStates: states,
      },
      connect: {
        setupMs: Math.round(this.setupMs ?? 0),
        tokensMs: Math.round(this.tokensMs ?? 0),
        connectMs: Math.round(this.connectMs ?? 0),
        clientsPerSecond: this.connectMs ? Math.round((everConnected / (this.connectMs / 1000)) * 10) / 10 : 0,
      },
      churn: {
        ...this.churnCounts,
        durationMs: Math.round(this.churnMs ?? 0),
        achievedPerSecond: this.churnMs
          ? Math.round((this.churnCounts.performed / (this.churnMs / 1000)) * 10) / 10
          : 0,
      },
      operations: this.stats.summary(),
      pushes: this.pushes,
      closes: this.closes,
      errors: this.errors,
    };
  }
}

/** Runs a whole simulation (start, churn for `durationMs`, stop) and resolves with its report. */
export async function runSimulation(options) {
  const simulation = new Simulation(options);
  try {
    await simulation.start();
    await simulation.churn();
  } finally {
    await simulation.stop();
  }
  return simulation.report();
}
