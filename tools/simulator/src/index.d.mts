// Types of the simulator library (the code is plain ESM JavaScript so it runs without a build).
import type { NatsConnection } from '@nats-io/transport-node';
import type { Client } from '@switchboard/client';
import type { WebSocketClient } from './websocket.mjs';

export interface SimulationOptions {
  /** admin-gateway: ws://host:port[/sync] or http://host:port. */
  gatewayUrl: string;
  /** Management API base URL: application config and client tokens from it (with apiKey). */
  managementUrl?: string;
  apiKey?: string;
  /** Signs tokens locally instead of asking the management API. */
  sharedSecret?: string;
  applicationId?: string;
  applicationConfigId?: string;
  natsUrl?: string;
  namespace?: string;
  region?: string | null;
  clients?: number;
  channels?: number;
  mediaServers?: number;
  mediaServerCapacity?: number;
  churnPerSecond?: number;
  durationMs?: number;
  connectionType?: 'sfu' | 'mcu' | 'peer';
  concurrency?: number;
  /** Send register, join, connection.open and the states to `connected` at once (default false: one by one). */
  pipeline?: boolean;
  requestTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  /** Channels are `<channelPrefix>-<k>` (default `sim-ch`). */
  channelPrefix?: string;
  signal?: AbortSignal;
  log?: (event: Record<string, unknown>) => void;
}

export interface LatencySummary {
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

export interface SimulationReport {
  runId: string;
  timeline: {
    startedAt: string | null;
    connectedAt: string | null;
    churnStartedAt: string | null;
    churnEndedAt: string | null;
    finishedAt: string | null;
  };
  config: {
    gateway: string;
    management: string | null;
    nats: string | null;
    namespace: string;
    clients: number;
    channels: number;
    mediaServers: number;
    churnPerSecond: number;
    durationMs: number;
    connectionType: string;
    concurrency: number;
  };
  application: { applicationId: string; applicationConfigId: string | null; created: boolean } | null;
  mediaServers: Array<{ id: string; region: string | null; capacity: number; heartbeats: number }>;
  clients: {
    requested: number;
    connected: number;
    failed: number;
    inChannelsAtEnd: number;
    finalStates: Record<string, number>;
  };
  /**
   * `setupMs`: the whole start (application, media servers, tokens, connecting); `tokensMs`: getting
   * every client's token; `connectMs`: connecting every client (socket, register, join, connection
   * to `connected`); `clientsPerSecond`: clients connected per second of `connectMs`.
   */
  connect: { setupMs: number; tokensMs: number; connectMs: number; clientsPerSecond: number };
  churn: {
    requested: number;
    performed: number;
    failed: number;
    skipped: number;
    byAction: { join: number; leave: number; mute: number };
    durationMs: number;
    achievedPerSecond: number;
  };
  operations: Record<string, { count: number; errors: number; latencyMs: LatencySummary | null }>;
  pushes: { received: number; byType: Record<string, number> };
  closes: Record<string, number>;
  errors: {
    total: number;
    byCode: Record<string, number>;
    samples: Array<{ op: string; code: string; message: string }>;
  };
}

export interface SimulatedClient {
  index: number;
  userId: string;
  deviceId: string;
  clientId: string;
  home: string;
  /** The SDK client holding the /sync session (no resume: a dropped socket ends it). */
  session: Client | null;
  /** Its lean socket (websocket.mjs) and the promise of that socket's close. */
  transport: WebSocketClient | null;
  transportClosed: Promise<void> | null;
  /** The client's token, from minting until it registers. */
  token: string | null;
  state: 'new' | 'registered' | 'connected' | 'failed' | 'closed' | 'unregistered';
  busy: boolean;
  channels: Map<string, string | null>;
  connections: Map<string, { channelId: string; audioMuted: boolean }>;
}

export declare const DEFAULTS: Readonly<
  Required<
    Omit<
      SimulationOptions,
      | 'gatewayUrl'
      | 'managementUrl'
      | 'apiKey'
      | 'sharedSecret'
      | 'applicationId'
      | 'applicationConfigId'
      | 'natsUrl'
      | 'signal'
      | 'log'
      | 'mediaServerCapacity'
    >
  >
>;

export declare class Simulation {
  constructor(options: SimulationOptions);
  readonly options: Required<Pick<SimulationOptions, 'clients' | 'channels' | 'mediaServers' | 'namespace'>> &
    SimulationOptions;
  readonly runId: string;
  readonly syncUrl: string;
  clients: SimulatedClient[];
  mediaServers: FakeMediaServer[];
  readonly channelIds: string[];
  /**
   * Creates or reuses the application, starts the media servers, connects every client (register, join,
   * sfu connection to `connected`).
   */
  start(): Promise<this>;
  /** One churn operation on a random idle client: join a channel (and connect), leave one, or toggle a mute. */
  churnOnce(): Promise<void>;
  /** Join/leave/mute churn at `churnPerSecond` for `durationMs`. */
  churn(durationMs?: number): Promise<void>;
  /** Unregisters every client, stops the media servers. */
  stop(): Promise<void>;
  report(): SimulationReport;
}

export declare function runSimulation(options: SimulationOptions): Promise<SimulationReport>;
export declare function syncUrlOf(gateway: string): string;

/**
 * The lean socket of websocket.mjs as a WebSocket class for the SDK's `Client` (`WebSocket` option);
 * `onTransport` sees each socket opened.
 */
export declare function leanWebSocketClass(options?: {
  handshakeTimeoutMs?: number;
  onTransport?: (transport: WebSocketClient) => void;
}): new (url: string) => {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: any) => void) | null;
  onmessage: ((event: any) => void) | null;
  onclose: ((event: any) => void) | null;
  onerror: ((event: any) => void) | null;
};

export declare class SyncRequestError extends Error {
  readonly type: string;
  readonly code: string;
  readonly details: Array<{ field?: string; message: string }>;
}

export declare class SyncClient {
  static connect(url: string, options?: { requestTimeoutMs?: number }): Promise<SyncClient>;
  /** The client's own RFC 6455 connection (websocket.mjs). */
  readonly ws: WebSocketClient;
  readonly open: boolean;
  readonly closed: Promise<{ code: number; reason: string }>;
  /** Runs `fn` with the socket corked, so the requests it sends leave in one write. */
  batch<T>(fn: () => T): T;
  closeInfo: { code: number; reason: string } | null;
  pushes: number;
  frameErrors: Array<{ code: string; message: string }>;
  onPush(listener: (push: { type: string } & Record<string, unknown>) => void): void;
  request<T = any>(type: string, data?: unknown): Promise<T>;
  close(code?: number): Promise<{ code: number; reason: string }>;
  terminate(): Promise<{ code: number; reason: string }>;
}

export declare class FakeMediaServer {
  constructor(options: {
    nc: NatsConnection;
    namespace: string;
    index: number;
    region?: string | null;
    capacity?: number;
    version?: string;
    heartbeatIntervalMs?: number;
    id?: string;
  });
  readonly id: string;
  readonly region: string | null;
  readonly capacity: number;
  heartbeats: number;
  heartbeat(): { role: 'mediaserver'; server: Record<string, unknown> };
  beat(): void;
  start(): this;
  stop(): void;
}

export declare function signClientToken(payload: Record<string, unknown>, sharedSecret: string): string;

export declare class ManagementClient {
  constructor(options: { url: string; apiKey: string; timeoutMs?: number });
  ensureApplication(
    applicationId: string,
    options?: { tag?: string },
  ): Promise<{ applicationConfigId: string; applicationId: string; created: boolean }>;
  token(applicationConfigId: string, claims: Record<string, unknown>): Promise<string>;
}

export declare class TokenSource {
  constructor(options: {
    management?: ManagementClient;
    applicationConfigId?: string;
    applicationId: string;
    sharedSecret?: string;
    ttlSeconds?: number;
  });
  token(client: {
    userId: string;
    deviceId: string;
    clientId: string;
    clientRoles: string[];
    channelIds: string[];
  }): Promise<string>;
}

export declare class OperationStats {
  time<T>(name: string, fn: () => Promise<T>): Promise<T>;
  record(name: string, ms: number): void;
  summary(): SimulationReport['operations'];
}
export declare function percentiles(samples: number[]): LatencySummary | null;

export declare const USAGE: string;
export declare function parseDuration(value: string, name?: string): number;
export declare function parseRate(value: string): number;
export declare function parseArgs(
  argv: string[],
  env?: Record<string, string | undefined>,
): { options: SimulationOptions; flags: { quiet: boolean; help: boolean } };
