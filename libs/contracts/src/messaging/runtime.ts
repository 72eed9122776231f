/**
 * The runtime contract between admin-gateway, management-api and runtime-registry.
 *
 * - `runtime-registry.v1.query`   interface A reads: one subject, a `kind` per operation; the
 *                                 result type of each kind is fixed by `RuntimeQueryResults`.
 * - `runtime-registry.v1.command` updates, kicks and messages at every level (interface A and the
 *                                 management API actions); answers `null` or a DomainError
 *                                 (`NotFound` for an unknown application, channel, user, ...).
 * - `runtime-registry.v1.edge`    what the client edge reports: register, join, leave, connection
 *                                 lifecycle, stats, client messages. An application is "in use"
 *                                 (listed, readable) from its first `client.register` until its
 *                                 last client unregisters; a channel is active while it has members.
 *                                 Reports are idempotent where a retry is plausible (register,
 *                                 join, leave, close); `connection.open` of `sfu`/`mcu` answers
 *                                 Unavailable when no media server can take it. Several reports
 *                                 may travel in one request (`EdgeBatch`, answered per report).
 *                                 `client.unregister` names the gateway (and session) ending the
 *                                 registration: a stale one changes nothing.
 * - `gateway.v1.push.<gatewayId>` (publish, no reply) what the registry pushes to the clients held
 *                                 by one gateway replica.
 * - `runtime-registry.v1.heartbeat` (publish) media servers and connectors announce themselves.
 * - `management-api.v1.applications.resolve`  the shared secret and owner of an application id.
 * - `management-api.v1.applications.changed`  (publish) an application config changed; caches drop it.
 * - JetStream stream `<namespace>-events`, subjects `<namespace>.events.<event type>`: the domain
 *   events (EventInfo plus owner), each with a unique id sent as `Nats-Msg-Id`.
 *
 * Every request carries the caller's `scope`; the registry answers another organization's
 * application exactly like a missing one.
 */
import type {
  ApplicationEnvironment,
  ApplicationSnapshot,
  ChannelPatch,
  ChannelSnapshot,
  ClientInChannelPatch,
  ClientInChannelSnapshot,
  ClientInfo,
  ClientPatch,
  ConnectionInfo,
  ConnectionPatch,
  ConnectionState,
  ConnectionType,
  DeviceInChannelPatch,
  DeviceInChannelSnapshot,
  DeviceInfo,
  MediaServer,
  MediaServerPatch,
  MediaServerStatistics,
  MessageBody,
  StreamDirection,
  UserInChannelPatch,
  UserInChannelSnapshot,
  UserInfo,
  EnvironmentServer,
} from '../interface-a/index.js';
import type { ChannelClaim } from '../interface-b/index.js';
import type { WireError } from '../problem/index.js';
import type { EventInfo } from '../webhooks/index.js';
import type { CallerScope } from './subjects.js';

export interface AppRef {
  applicationId: string;
}
export interface ChannelRef extends AppRef {
  channelId: string;
}
export interface UserRef extends AppRef {
  userId: string;
}
export interface DeviceRef extends UserRef {
  deviceId: string;
}
export interface ClientRef extends DeviceRef {
  clientId: string;
}
export type ChannelUserRef = ChannelRef & UserRef;
export type ChannelDeviceRef = ChannelRef & DeviceRef;
export type ChannelClientRef = ChannelRef & ClientRef;
export interface ConnectionRef extends ChannelClientRef {
  connectionId: string;
}

// ---------------------------------------------------------------------------------------------
// Queries (interface A reads)
// ---------------------------------------------------------------------------------------------

export interface DatastorePage {
  /** Keys and values (secrets never included); values of hashes/sets/lists as JSON. */
  entries: Array<{ key: string; type: string; value: unknown }>;
  /** Opaque cursor of the next page; null when done. */
  next: string | null;
}

export interface Connector {
  id: string;
  type: string;
  region: string | null;
  version: string | null;
  addresses: string[];
  active: boolean;
  lastHeartbeat: string;
}

/**
 * The parameters of a query kind that takes none: the query is `{ kind }` alone. (Not
 * `Record<string, never>`: intersected with `{ kind }` that would make `kind` itself `never`.)
 */
export type NoParams = Record<never, never>;

/** Each query kind: its parameters and its result. */
export interface RuntimeQueries {
  'applications.list': { params: NoParams; result: string[] };
  'application.get': { params: AppRef; result: ApplicationSnapshot };
  'application.environment': { params: AppRef; result: ApplicationEnvironment };
  'channels.list': { params: AppRef; result: ChannelSnapshot[] };
  'channel.get': { params: ChannelRef; result: ChannelSnapshot };
  'client.channels': { params: ClientRef; result: ChannelSnapshot[] };
  'users.list': { params: AppRef; result: UserInfo[] };
  'user.get': { params: UserRef; result: UserInfo };
  'channel.users': { params: ChannelRef; result: UserInChannelSnapshot[] };
  'channel.user.get': { params: ChannelUserRef; result: UserInChannelSnapshot };
  'user.devices': { params: UserRef; result: DeviceInfo[] };
  'device.get': { params: DeviceRef; result: DeviceInfo };
  'channel.devices': { params: ChannelRef; result: DeviceInChannelSnapshot[] };
  'channel.user.devices': { params: ChannelUserRef; result: DeviceInChannelSnapshot[] };
  'channel.device.get': { params: ChannelDeviceRef; result: DeviceInChannelSnapshot };
  'device.clients': { params: DeviceRef; result: ClientInfo[] };
  'client.get': { params: ClientRef; result: ClientInfo };
  'channel.clients': { params: ChannelRef; result: ClientInChannelSnapshot[] };
  'channel.device.clients': { params: ChannelDeviceRef; result: ClientInChannelSnapshot[] };
  'channel.client.get': { params: ChannelClientRef; result: ClientInChannelSnapshot };
  'channel.connections': { params: ChannelRef; result: ConnectionInfo[] };
  'channel.client.connections': { params: ChannelClientRef; result: ConnectionInfo[] };
  'connection.get': { params: ConnectionRef; result: ConnectionInfo };
  'mediaservers.list': { params: NoParams; result: MediaServer[] };
  'mediaserver.get': { params: { mediaServerId: string }; result: MediaServer };
  'mediaserver.stats': { params: { mediaServerId: string }; result: MediaServerStatistics };
  'mediaservers.stats': { params: NoParams; result: MediaServerStatistics[] };
  'connectors.list': { params: NoParams; result: Connector[] };
  'diagnostics.datastore': { params: { cursor?: string; count?: number }; result: DatastorePage };
}
export type RuntimeQueryKind = keyof RuntimeQueries;
/** Queries about the shared infrastructure: operator credential only. */
export const OPERATOR_QUERIES: readonly RuntimeQueryKind[] = [
  'mediaservers.list',
  'mediaserver.get',
  'mediaserver.stats',
  'mediaservers.stats',
  'connectors.list',
  'diagnostics.datastore',
];

export type RuntimeQuery = { [K in RuntimeQueryKind]: { kind: K } & RuntimeQueries[K]['params'] }[RuntimeQueryKind];
export type RuntimeQueryResult<K extends RuntimeQueryKind> = RuntimeQueries[K]['result'];

// ---------------------------------------------------------------------------------------------
// Commands (updates, kicks, messages)
// ---------------------------------------------------------------------------------------------

/** The ten message targets. */
export type MessageTarget =
  | ({ level: 'application' } & AppRef)
  | ({ level: 'channel' } & ChannelRef)
  | ({ level: 'user' } & UserRef)
  | ({ level: 'channel.user' } & ChannelUserRef)
  | ({ level: 'device' } & DeviceRef)
  | ({ level: 'channel.device' } & ChannelDeviceRef)
  | ({ level: 'client' } & ClientRef)
  | ({ level: 'channel.client' } & ChannelClientRef);

/** The five kick levels. */
export type KickTarget =
  | ({ level: 'channel' } & ChannelRef)
  | ({ level: 'channel.user' } & ChannelUserRef)
  | ({ level: 'channel.device' } & ChannelDeviceRef)
  | ({ level: 'channel.client' } & ChannelClientRef)
  | ({ level: 'connection' } & ConnectionRef);

/** `recordingMode` comes from the management API's level configs (e.g. `AudioVideo`). */
export interface RecordingModeExtra {
  recordingMode?: string | null;
}

export type UpdateTarget =
  | ({ level: 'channel'; patch: ChannelPatch & RecordingModeExtra } & ChannelRef)
  | ({ level: 'channel.user'; patch: UserInChannelPatch & RecordingModeExtra } & ChannelUserRef)
  | ({ level: 'channel.device'; patch: DeviceInChannelPatch & RecordingModeExtra } & ChannelDeviceRef)
  | ({ level: 'client'; patch: ClientPatch } & ClientRef)
  | ({ level: 'channel.client'; patch: ClientInChannelPatch & RecordingModeExtra } & ChannelClientRef)
  | ({ level: 'connection'; patch: ConnectionPatch & RecordingModeExtra } & ConnectionRef);

export type RuntimeCommand =
  | { kind: 'message'; target: MessageTarget; message: MessageBody; origin: 'api' }
  | { kind: 'kick'; target: KickTarget; origin: 'api' }
  | { kind: 'update'; target: UpdateTarget; origin: 'api' }
  | { kind: 'mediaserver.update'; mediaServerId: string; patch: MediaServerPatch };

// ---------------------------------------------------------------------------------------------
// Client edge (gateway -> registry)
// ---------------------------------------------------------------------------------------------

export interface StreamDescription {
  audio?: { direction: StreamDirection; muted?: boolean; disabled?: boolean; formats?: string[] } | null;
  /** `width`, `height` (pixels) and `frameRate`: what the client currently sends or receives, when it says. */
  video?: {
    direction: StreamDirection;
    muted?: boolean;
    disabled?: boolean;
    formats?: string[];
    maxPixelCount?: number;
    width?: number;
    height?: number;
    frameRate?: number;
  } | null;
  data?: { direction: StreamDirection; channelLabels?: string[] } | null;
}

export type EdgeReport =
  | {
      kind: 'client.register';
      client: ClientRef & {
        userAlias: string | null;
        deviceAlias: string | null;
        tag: string | null;
        roles: string[];
        protocol: string;
      };
      organizationId: string;
      gatewayId: string;
      claims: ChannelClaim[];
      /**
       * The registration this report starts (the gateway's session of the client, a UUID); a later
       * `client.unregister` naming another one is stale and ignored.
       */
      sessionId?: string;
    }
  | {
      kind: 'client.unregister';
      client: ClientRef;
      reason: 'left' | 'dropped' | 'kicked';
      /**
       * The gateway (and its session) ending the registration. The registry unregisters the client
       * only while it is still registered through that gateway (and session): an unregister that
       * arrives after the client registered again elsewhere (e.g. the grace-period unregister of an
       * old socket's gateway) changes nothing and answers ok.
       */
      gatewayId: string;
      sessionId?: string;
    }
  | { kind: 'client.join'; client: ClientRef; channelId: string; claim: ChannelClaim }
  /**
   * `sessionId` (leave, connection state and close): only while that registration of the client
   * holds it. A leave or close arriving after the client registered again in another session
   * changes nothing and answers ok; a state change answers NotFound.
   */
  | { kind: 'client.leave'; client: ClientRef; channelId: string; sessionId?: string }
  | {
      kind: 'client.update';
      client: ClientRef;
      userAlias?: string | null;
      deviceAlias?: string | null;
      tag?: string | null;
    }
  | {
      kind: 'client.message';
      client: ClientRef;
      channelId: string | null;
      message: MessageBody;
      to?: { userId?: string; deviceId?: string; clientId?: string };
    }
  | { kind: 'client.stats'; client: ClientRef; stats: Record<string, unknown> }
  | {
      kind: 'connection.open';
      client: ClientRef;
      channelId: string;
      connectionId: string;
      type: ConnectionType;
      tag: string | null;
      streams: StreamDescription;
      remoteConnectionId?: string | null;
    }
  | {
      kind: 'connection.state';
      client: ClientRef;
      channelId: string;
      connectionId: string;
      state: ConnectionState;
      error?: { code: string; message: string } | null;
      sessionId?: string;
    }
  | {
      kind: 'connection.update';
      client: ClientRef;
      channelId: string;
      connectionId: string;
      localAudioMuted?: boolean;
      localVideoMuted?: boolean;
      tag?: string | null;
      streams?: StreamDescription;
    }
  | {
      kind: 'connection.stats';
      client: ClientRef;
      channelId: string;
      connectionId: string;
      stats: Record<string, unknown>;
    }
  | { kind: 'connection.close'; client: ClientRef; channelId: string; connectionId: string; sessionId?: string };

/**
 * A read on the edge subject (`runtime-registry.v1.edge` with `report: { kind: 'gateway.sessions',
 * ... }`), not a report of a change: what the registry holds for each of these clients (the
 * sessions of the gateway asking), so the gateway can make its sessions converge after pushes it
 * lost. At most EDGE_SESSIONS_MAX_CLIENTS clients; answered EdgeSessionsResult.
 */
export interface EdgeSessionsRead {
  kind: 'gateway.sessions';
  clients: ClientRef[];
}
export const EDGE_SESSIONS_MAX_CLIENTS = 500;

/**
 * A read on the edge subject (`report: { kind: 'gateway.clients', ... }`): the clients the registry
 * holds as registered through gateway replica `gatewayId`, a page at a time (`cursor` "0" or absent
 * to start; `count` a hint, at most EDGE_SESSIONS_MAX_CLIENTS), so the gateway can find
 * registrations it has no session for (a register whose answer it lost). Answered
 * EdgeGatewayClientsResult (`next` null when done; a client may come twice).
 */
export interface EdgeGatewayClientsRead {
  kind: 'gateway.clients';
  gatewayId: string;
  cursor?: string;
  count?: number;
}
export interface EdgeGatewayClientsResult {
  clients: ClientRef[];
  next: string | null;
}
/** One per client asked, in order; null: not registered. */
export interface EdgeSessionsResult {
  clients: Array<EdgeSessionState | null>;
}

/**
 * A client as the registry holds it, for the gateway's check of its session (`gateway.sessions`):
 * every fact a push could have changed. Read per application in one atomic step.
 */
export interface EdgeSessionState {
  /** The gateway replica and session holding the registration (null: registered without one). */
  gatewayId: string | null;
  sessionId: string | null;
  userAlias: string | null;
  deviceAlias: string | null;
  tag: string | null;
  roles: string[];
  channels: Array<{
    channelId: string;
    claim: ChannelClaim;
    /** The client's connections in the channel, with the effective settings a `settings` push carries. */
    connections: Array<{ connectionId: string; settings: EffectiveSettings }>;
  }>;
  /** The application's settings sequence number when read: the `version` of the settings pushes sent up to then. */
  settingsVersion: number;
}

/**
 * Several reports in one request (`runtime-registry.v1.edge` with `report: { kind: 'batch', ... }`):
 * `sequences` are independent of each other (e.g. the queued requests of different sockets) and may
 * run concurrently; the reports of one sequence run in order, each exactly as if reported alone.
 * The first report of a sequence that fails ends it: the reports after it are not applied
 * (`skipped`), because the edge prepared them assuming the failed one succeeded and must prepare
 * them again. One exception: reports the registry applies together (one script run) whose events
 * could not be published yet are all applied, so each answers `Unavailable` (applied, its events
 * parked and published later) and none is `skipped`. At most EDGE_BATCH_MAX_REPORTS reports in all.
 */
export interface EdgeBatch {
  kind: 'batch';
  sequences: EdgeReport[][];
}
export const EDGE_BATCH_MAX_REPORTS = 1000;

/** The outcome of one report of a batch: its EdgeResults value, its error, or not applied. */
export type EdgeOutcome = { ok: unknown } | { error: WireError } | { skipped: true };
/** The answer to an EdgeBatch: the outcomes of each sequence, in order. */
export interface EdgeBatchResult {
  sequences: EdgeOutcome[][];
}

export interface EdgeResults {
  'client.register': { ok: true };
  'client.unregister': { ok: true };
  'client.join': { channel: ChannelSnapshot; settings: EffectiveSettings };
  'client.leave': { ok: true };
  'client.update': { ok: true };
  'client.message': { delivered: number };
  'client.stats': { ok: true };
  'connection.open': { mediaServerId: string | null; settings: EffectiveSettings };
  'connection.state': { ok: true };
  'connection.update': { ok: true };
  'connection.stats': { ok: true };
  'connection.close': { ok: true };
}

/**
 * What applies to one connection after the levels above it were combined: channel > user in
 * channel > device in channel > client in channel > connection. A level reaches every connection
 * below it except those its excluded id lists name; among the levels that reach a connection, the
 * most recent write of each setting wins (whatever its level). Unset: false / null.
 */
export interface EffectiveSettings {
  recording: boolean;
  recordingTag: string | null;
  audioMuted: boolean;
  videoMuted: boolean;
  audioUnmuteDisabled: boolean;
  videoUnmuteDisabled: boolean;
}

/** Whether two EffectiveSettings say the same (the six fields). */
export function sameSettings(a: EffectiveSettings, b: EffectiveSettings): boolean {
  return (
    a.recording === b.recording &&
    a.recordingTag === b.recordingTag &&
    a.audioMuted === b.audioMuted &&
    a.videoMuted === b.videoMuted &&
    a.audioUnmuteDisabled === b.audioUnmuteDisabled &&
    a.videoUnmuteDisabled === b.videoUnmuteDisabled
  );
}

// ---------------------------------------------------------------------------------------------
// Pushes (registry -> the gateway replica holding the client)
// ---------------------------------------------------------------------------------------------

export type ServerPush =
  | {
      type: 'message';
      channelId: string | null;
      message: MessageBody;
      from: {
        userId: string | null;
        userAlias: string | null;
        deviceId: string | null;
        deviceAlias: string | null;
        clientId: string | null;
        clientTag: string | null;
        clientRoles: string[] | null;
      };
    }
  | { type: 'kicked'; channelId: string; connectionId?: string | null }
  | {
      type: 'settings';
      channelId: string;
      connectionId: string;
      settings: EffectiveSettings;
      /**
       * Order of settings changes within the application (increasing). Two updates handled by two
       * registry replicas may push out of order: a push with a lower version than one already
       * applied to the connection is stale and may be ignored.
       */
      version?: number;
    }
  | {
      type: 'client.updated';
      userAlias: string | null;
      deviceAlias: string | null;
      tag: string | null;
      roles: string[];
    }
  | { type: 'claim.updated'; channelId: string; claim: ChannelClaim }
  /** The client registered again through another gateway replica: the old session ends. */
  | { type: 'unregistered'; reason: string };

export interface PushBatch {
  deliveries: Array<{ client: ClientRef; push: ServerPush }>;
}

// ---------------------------------------------------------------------------------------------
// Heartbeats, application resolution, domain events
// ---------------------------------------------------------------------------------------------

/**
 * Published (core NATS, no reply) on `<ns>.runtime-registry.v1.heartbeat`, as this body or as a
 * Nest event packet `{ pattern, data: Heartbeat }`, every few seconds. A server without a heartbeat
 * for SERVER_HEARTBEAT_TIMEOUT_SECONDS is gone (active=false, no new placements); `server.active:
 * false` announces a shutdown (gone at once). `active` and `lastHeartbeat` of the listed servers
 * are computed by the registry. `capacity` (media servers): most connections placed on it;
 * `type` (connectors): e.g. `sip`, `rtmp` (default `sip`).
 */
export interface Heartbeat {
  role: 'mediaserver' | 'connector' | 'gateway' | 'recording';
  server: EnvironmentServer & { capacity?: number; computer?: MediaServer['computer'] };
  type?: string;
}

export interface ResolvedApplication {
  applicationId: string;
  applicationConfigId: string;
  organizationId: string;
  sharedSecret: string;
  disabled: boolean;
  /** true: the application's organization is disabled (client tokens are refused). */
  organizationDisabled?: boolean;
}

/** What flows through JetStream: the webhook EventInfo plus its owner. */
export interface DomainEvent {
  event: EventInfo;
  applicationId: string;
  organizationId: string;
}

export const RuntimeSubjects = {
  query: 'runtime-registry.v1.query',
  command: 'runtime-registry.v1.command',
  edge: 'runtime-registry.v1.edge',
  heartbeat: 'runtime-registry.v1.heartbeat',
  resolveApplication: 'management-api.v1.applications.resolve',
  applicationChanged: 'management-api.v1.applications.changed',
  organizationChanged: 'management-api.v1.organizations.changed',
} as const;

/** Subject a gateway replica listens on for pushes to its clients. */
export function pushSubject(namespace: string, gatewayId: string): string {
  return `${namespace}.gateway.v1.push.${gatewayId}`;
}

/** JetStream stream of domain events, and the subject of one event type. */
export function eventStreamName(namespace: string): string {
  return `${namespace}-events`;
}
export function eventSubject(namespace: string, type: string): string {
  return `${namespace}.events.${type}`;
}

/**
 * The limits our streams are created with (durations in milliseconds): 7 days, duplicates dropped within 2 minutes, one
 * replica.
 */
export const STREAM_LIMITS = Object.freeze({
  maxAgeMs: 7 * 24 * 3600 * 1000,
  duplicateWindowMs: 2 * 60 * 1000,
  replicas: 1,
});

/**
 * The domain event stream as whoever starts first creates it: runtime-registry (its owner, which
 * may configure other limits) or a consumer (webhook-worker, usage-aggregator, recording-service),
 * none of which waits for the owner. Limits retention (every consumer keeps its own position), file
 * storage, 7 days, duplicates by `Nats-Msg-Id` (= event id) dropped within 2 minutes. Durations in
 * milliseconds (JetStream takes nanoseconds). A consumer's idempotency records of an event may be
 * forgotten once the event is older than `maxAgeMs`: the stream cannot deliver it again.
 */
export function eventStreamSettings(namespace: string) {
  return { name: eventStreamName(namespace), subjects: [eventSubject(namespace, '>')], ...STREAM_LIMITS };
}

export interface RuntimeRequestMap {
  'runtime-registry.v1.query': { request: { scope: CallerScope; query: RuntimeQuery }; response: unknown };
  'runtime-registry.v1.command': { request: { scope: CallerScope; command: RuntimeCommand }; response: null };
  'runtime-registry.v1.edge': {
    request: { report: EdgeReport | EdgeBatch | EdgeSessionsRead | EdgeGatewayClientsRead };
    response: unknown;
  };
  'management-api.v1.applications.resolve': { request: { applicationId: string }; response: ResolvedApplication };
}
