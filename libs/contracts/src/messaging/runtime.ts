/**
 * The runtime contract between admin-gateway, management-api and runtime-registry: queries,
 * commands, heartbeats, application resolution and domain events. Subjects and their rules are in
 * docs/runtime-contract.md; edge reports are in runtime-edge.ts, pushes in runtime-push.ts.
 */
import type { ResolvedWebhook } from './webhooks.js';
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
  DeviceInChannelPatch,
  DeviceInChannelSnapshot,
  DeviceInfo,
  MediaServer,
  MediaServerPatch,
  MediaServerStatistics,
  MessageBody,
  UserInChannelPatch,
  UserInChannelSnapshot,
  UserInfo,
  EnvironmentServer,
} from '../interface-a/index.js';
import type { EventInfo } from '../webhooks/index.js';
import type { CallerScope } from './subjects.js';
import type { EdgeBatch, EdgeGatewayClientsRead, EdgeReport, EdgeSessionsRead } from './runtime-edge.js';

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
  /** A test event (`webhook.test`, interface B `SendTest`) goes to this one webhook only, whatever it wants. */
  testWebhook?: ResolvedWebhook;
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
 * The domain event stream as whoever starts first creates it (runtime-registry or a consumer);
 * retention and idempotency windows in docs/runtime-contract.md.
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
