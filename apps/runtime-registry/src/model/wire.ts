/**
 * Run-time validation of what arrives over NATS (the contract of libs/contracts/src/messaging/
 * runtime.ts is TypeScript types; these schemas check the same shapes, rejecting unknown fields).
 * A request that fails answers ValidationFailed naming each offending field.
 */
import { Type, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';
import {
  CallerScope,
  ChannelClaim,
  ContractViolation,
  isUuid,
  ChannelPatch,
  ClientInChannelPatch,
  ClientPatch,
  CONNECTION_STATES,
  CONNECTION_TYPES,
  ConnectionPatch,
  DeviceInChannelPatch,
  MediaIceCandidate,
  MediaServerPatch,
  MediaSessionDescription,
  MessageBody,
  STREAM_DIRECTIONS,
  UserInChannelPatch,
  validator,
  EDGE_BATCH_MAX_REPORTS,
  EDGE_SESSIONS_MAX_CLIENTS,
  type EdgeBatch,
  type EdgeReport,
  type EdgeGatewayClientsRead,
  type EdgeSessionsRead,
  type Heartbeat,
  type RuntimeCommand,
  type RuntimeQuery,
  type Validator,
} from '@switchboard/contracts';

const Id = Type.String({ minLength: 1, maxLength: 256 });
const NullableString = (max = 1024) => Type.Union([Type.String({ maxLength: max }), Type.Null()]);
const closed = <P extends TProperties>(props: P): TObject<P> => Type.Object(props, { additionalProperties: false });
const Literal = <V extends string>(v: V) => Type.Literal(v);

const app = { applicationId: Id };
const channel = { ...app, channelId: Id };
const user = { ...app, userId: Id };
const device = { ...user, deviceId: Id };
const client = { ...device, clientId: Id };
const channelUser = { ...channel, userId: Id };
const channelDevice = { ...channelUser, deviceId: Id };
const channelClient = { ...channelDevice, clientId: Id };
const connection = { ...channelClient, connectionId: Id };
const none = {};

const QUERY_PARAMS: Record<RuntimeQuery['kind'], TProperties> = {
  'applications.list': none,
  'application.get': app,
  'application.environment': app,
  'channels.list': app,
  'channel.get': channel,
  'client.channels': client,
  'users.list': app,
  'user.get': user,
  'channel.users': channel,
  'channel.user.get': channelUser,
  'user.devices': user,
  'device.get': device,
  'channel.devices': channel,
  'channel.user.devices': channelUser,
  'channel.device.get': channelDevice,
  'device.clients': device,
  'client.get': client,
  'channel.clients': channel,
  'channel.device.clients': channelDevice,
  'channel.client.get': channelClient,
  'channel.connections': channel,
  'channel.client.connections': channelClient,
  'connection.get': connection,
  'mediaservers.list': none,
  'mediaserver.get': { mediaServerId: Id },
  'mediaserver.stats': { mediaServerId: Id },
  'mediaservers.stats': none,
  'connectors.list': none,
  'diagnostics.datastore': {
    cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,20}$' })),
    count: Type.Optional(Type.Integer({ minimum: 1, maximum: 100000 })),
  },
};

export const QUERY_KINDS = Object.keys(QUERY_PARAMS) as Array<RuntimeQuery['kind']>;

function union(schemas: TSchema[]): TSchema {
  return Type.Union(schemas);
}

const QuerySchema = union(QUERY_KINDS.map((kind) => closed({ kind: Literal(kind), ...QUERY_PARAMS[kind] })));

const RecordingMode = { recordingMode: Type.Optional(NullableString(64)) };
const withMode = (schema: TObject) => closed({ ...schema.properties, ...RecordingMode });

const MessageTargetSchema = union([
  closed({ level: Literal('application'), ...app }),
  closed({ level: Literal('channel'), ...channel }),
  closed({ level: Literal('user'), ...user }),
  closed({ level: Literal('channel.user'), ...channelUser }),
  closed({ level: Literal('device'), ...device }),
  closed({ level: Literal('channel.device'), ...channelDevice }),
  closed({ level: Literal('client'), ...client }),
  closed({ level: Literal('channel.client'), ...channelClient }),
]);

const KickTargetSchema = union([
  closed({ level: Literal('channel'), ...channel }),
  closed({ level: Literal('channel.user'), ...channelUser }),
  closed({ level: Literal('channel.device'), ...channelDevice }),
  closed({ level: Literal('channel.client'), ...channelClient }),
  closed({ level: Literal('connection'), ...connection }),
]);

const UpdateTargetSchema = union([
  closed({ level: Literal('channel'), patch: withMode(ChannelPatch), ...channel }),
  closed({ level: Literal('channel.user'), patch: withMode(UserInChannelPatch), ...channelUser }),
  closed({ level: Literal('channel.device'), patch: withMode(DeviceInChannelPatch), ...channelDevice }),
  closed({ level: Literal('client'), patch: ClientPatch, ...client }),
  closed({ level: Literal('channel.client'), patch: withMode(ClientInChannelPatch), ...channelClient }),
  closed({ level: Literal('connection'), patch: withMode(ConnectionPatch), ...connection }),
]);

const CommandSchema = union([
  closed({ kind: Literal('message'), target: MessageTargetSchema, message: MessageBody, origin: Literal('api') }),
  closed({ kind: Literal('kick'), target: KickTargetSchema, origin: Literal('api') }),
  closed({ kind: Literal('update'), target: UpdateTargetSchema, origin: Literal('api') }),
  closed({ kind: Literal('mediaserver.update'), mediaServerId: Id, patch: MediaServerPatch }),
]);

// ---------------------------------------------------------------------------------------------
// Edge reports
// ---------------------------------------------------------------------------------------------

const ClientRefSchema = closed(client);
const Direction = Type.Union(STREAM_DIRECTIONS.map((d) => Type.Literal(d)));
const Formats = Type.Array(Type.String({ maxLength: 256 }), { maxItems: 64 });
const StreamDescriptionSchema = closed({
  audio: Type.Optional(
    Type.Union([
      closed({
        direction: Direction,
        muted: Type.Optional(Type.Boolean()),
        disabled: Type.Optional(Type.Boolean()),
        formats: Type.Optional(Formats),
      }),
      Type.Null(),
    ]),
  ),
  video: Type.Optional(
    Type.Union([
      closed({
        direction: Direction,
        muted: Type.Optional(Type.Boolean()),
        disabled: Type.Optional(Type.Boolean()),
        formats: Type.Optional(Formats),
        maxPixelCount: Type.Optional(Type.Integer({ minimum: 0 })),
        width: Type.Optional(Type.Integer({ minimum: 0 })),
        height: Type.Optional(Type.Integer({ minimum: 0 })),
        frameRate: Type.Optional(Type.Number({ minimum: 0 })),
      }),
      Type.Null(),
    ]),
  ),
  data: Type.Optional(
    Type.Union([
      closed({
        direction: Direction,
        channelLabels: Type.Optional(Type.Array(Type.String({ maxLength: 256 }), { maxItems: 64 })),
      }),
      Type.Null(),
    ]),
  ),
});
const ConnState = Type.Union(CONNECTION_STATES.map((s) => Type.Literal(s)));
const ConnType = Type.Union(CONNECTION_TYPES.map((s) => Type.Literal(s)));
const Stats = Type.Record(Type.String(), Type.Unknown());
const connRef = { client: ClientRefSchema, channelId: Id, connectionId: Id };

const EdgeSchema = union([
  closed({
    kind: Literal('client.register'),
    client: closed({
      ...client,
      userAlias: NullableString(),
      deviceAlias: NullableString(),
      tag: NullableString(),
      roles: Type.Array(Type.String({ maxLength: 256 }), { maxItems: 256 }),
      protocol: Type.String({ minLength: 1, maxLength: 64 }),
    }),
    organizationId: Id,
    gatewayId: Id,
    claims: Type.Array(ChannelClaim, { maxItems: 1000 }),
    sessionId: Type.Optional(Id),
  }),
  closed({
    kind: Literal('client.unregister'),
    client: ClientRefSchema,
    reason: Type.Union([Literal('left'), Literal('dropped'), Literal('kicked')]),
    gatewayId: Id,
    sessionId: Type.Optional(Id),
  }),
  closed({ kind: Literal('client.join'), client: ClientRefSchema, channelId: Id, claim: ChannelClaim }),
  closed({ kind: Literal('client.leave'), client: ClientRefSchema, channelId: Id, sessionId: Type.Optional(Id) }),
  closed({
    kind: Literal('client.update'),
    client: ClientRefSchema,
    userAlias: Type.Optional(NullableString()),
    deviceAlias: Type.Optional(NullableString()),
    tag: Type.Optional(NullableString()),
  }),
  closed({
    kind: Literal('client.message'),
    client: ClientRefSchema,
    channelId: Type.Union([Id, Type.Null()]),
    message: MessageBody,
    to: Type.Optional(closed({ userId: Type.Optional(Id), deviceId: Type.Optional(Id), clientId: Type.Optional(Id) })),
  }),
  closed({ kind: Literal('client.stats'), client: ClientRefSchema, stats: Stats }),
  closed({
    kind: Literal('connection.open'),
    ...connRef,
    type: ConnType,
    tag: NullableString(),
    streams: StreamDescriptionSchema,
    remoteConnectionId: Type.Optional(Type.Union([Id, Type.Null()])),
  }),
  closed({
    kind: Literal('connection.state'),
    ...connRef,
    state: ConnState,
    error: Type.Optional(
      Type.Union([
        closed({ code: Type.String({ maxLength: 256 }), message: Type.String({ maxLength: 4096 }) }),
        Type.Null(),
      ]),
    ),
    sessionId: Type.Optional(Id),
  }),
  closed({
    kind: Literal('connection.update'),
    ...connRef,
    localAudioMuted: Type.Optional(Type.Boolean()),
    localVideoMuted: Type.Optional(Type.Boolean()),
    tag: Type.Optional(NullableString()),
    streams: Type.Optional(StreamDescriptionSchema),
  }),
  closed({ kind: Literal('connection.stats'), ...connRef, stats: Stats }),
  closed({ kind: Literal('connection.close'), ...connRef, sessionId: Type.Optional(Id) }),
  closed({
    kind: Literal('connection.relay'),
    ...connRef,
    signal: closed({
      offer: Type.Optional(MediaSessionDescription),
      answer: Type.Optional(MediaSessionDescription),
      candidates: Type.Optional(Type.Array(MediaIceCandidate, { maxItems: 64 })),
      completed: Type.Optional(Type.Boolean()),
    }),
  }),
]);

// ---------------------------------------------------------------------------------------------
// Heartbeats
// ---------------------------------------------------------------------------------------------

const Computer = closed({
  hostName: Type.String({ maxLength: 256 }),
  ipAddresses: Type.Array(Type.String({ maxLength: 256 }), { maxItems: 64 }),
  processorCount: Type.Integer({ minimum: 0 }),
  memoryBytes: Type.Integer({ minimum: 0 }),
  region: NullableString(128),
  version: NullableString(128),
});

export const HeartbeatSchema = closed({
  role: Type.Union([Literal('mediaserver'), Literal('connector'), Literal('gateway'), Literal('recording')]),
  type: Type.Optional(Type.String({ maxLength: 64 })),
  server: Type.Object(
    {
      id: Id,
      region: Type.Optional(NullableString(128)),
      version: Type.Optional(NullableString(128)),
      addresses: Type.Optional(Type.Array(Type.String({ maxLength: 512 }), { maxItems: 64 })),
      capacity: Type.Optional(Type.Integer({ minimum: 0 })),
      computer: Type.Optional(Computer),
    },
    // Senders may echo the EnvironmentServer fields the registry computes itself (active, lastHeartbeat).
    { additionalProperties: true },
  ),
});

/**
 * Validates a discriminated union member by member: the discriminator picks the schema, so the
 * errors name the offending fields of that member (not "must match one of the union").
 */
function discriminated(name: string, field: string, members: TSchema[]): (value: unknown, path: string) => unknown {
  const byTag = new Map<string, Validator<TSchema>>();
  for (const m of members) {
    const tag = (m as TObject).properties[field] as TSchema & { const?: string };
    byTag.set(String(tag.const), validator(m, name));
  }
  return (value, path) => {
    const tag = value && typeof value === 'object' ? (value as Record<string, unknown>)[field] : undefined;
    const v = typeof tag === 'string' ? byTag.get(tag) : undefined;
    if (!v)
      throw new ContractViolation(name, [
        { field: path ? `${path}.${field}` : field, message: `must be one of ${[...byTag.keys()].join(', ')}` },
      ]);
    if (v.check(value)) return value;
    const errors = v.errors(value);
    if (errors.length)
      throw new ContractViolation(
        name,
        errors.map((e) => ({ field: path ? (e.field ? `${path}.${e.field}` : path) : e.field, message: e.message })),
      );
    return value;
  };
}

function envelope(name: string, props: TProperties) {
  return validator(closed(props), name);
}

/** The members of a TypeBox union, one schema per discriminator value. */
const alternativesOf = (union: TSchema) => (union as unknown as { anyOf: TSchema[] }).anyOf;

const queryEnvelope = envelope('runtime-registry.v1.query', { scope: CallerScope, query: Type.Object({}) });
const commandEnvelope = envelope('runtime-registry.v1.command', { scope: CallerScope, command: Type.Object({}) });
const edgeEnvelope = envelope('runtime-registry.v1.edge', { report: Type.Object({}) });
const checkQuery = discriminated('runtime-registry.v1.query', 'kind', alternativesOf(QuerySchema));
const checkCommand = discriminated('runtime-registry.v1.command', 'kind', alternativesOf(CommandSchema));
const checkEdge = discriminated('runtime-registry.v1.edge', 'kind', alternativesOf(EdgeSchema));
const checkMessageTarget = discriminated('runtime-registry.v1.command', 'level', alternativesOf(MessageTargetSchema));
const checkKickTarget = discriminated('runtime-registry.v1.command', 'level', alternativesOf(KickTargetSchema));
const checkUpdateTarget = discriminated('runtime-registry.v1.command', 'level', alternativesOf(UpdateTargetSchema));
const heartbeatValidator = validator(HeartbeatSchema, 'runtime-registry.v1.heartbeat');

export function parseQuery(value: unknown): { scope: CallerScope; query: RuntimeQuery } {
  const r = queryEnvelope.parse(value) as { scope: CallerScope; query: unknown };
  checkQuery(r.query, 'query');
  return r as { scope: CallerScope; query: RuntimeQuery };
}

export function parseCommand(value: unknown): { scope: CallerScope; command: RuntimeCommand } {
  const r = commandEnvelope.parse(value) as { scope: CallerScope; command: Record<string, unknown> };
  const kind = r.command.kind;
  // The target's own union first, for precise field names; then the whole command.
  if (kind === 'message') checkMessageTarget(r.command.target, 'command.target');
  if (kind === 'kick') checkKickTarget(r.command.target, 'command.target');
  if (kind === 'update') checkUpdateTarget(r.command.target, 'command.target');
  checkCommand(r.command, 'command');
  return r as unknown as { scope: CallerScope; command: RuntimeCommand };
}

const batchEnvelope = validator(
  closed({
    kind: Literal('batch'),
    sequences: Type.Array(Type.Array(Type.Object({}), { minItems: 1 }), {
      minItems: 1,
      maxItems: EDGE_BATCH_MAX_REPORTS,
    }),
  }),
  'runtime-registry.v1.edge',
);

const sessionsRead = validator(
  closed({
    kind: Literal('gateway.sessions'),
    clients: Type.Array(ClientRefSchema, { maxItems: EDGE_SESSIONS_MAX_CLIENTS }),
  }),
  'runtime-registry.v1.edge',
);

const gatewayClientsRead = validator(
  closed({
    kind: Literal('gateway.clients'),
    gatewayId: Id,
    cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,20}$' })),
    count: Type.Optional(Type.Integer({ minimum: 1, maximum: EDGE_SESSIONS_MAX_CLIENTS })),
  }),
  'runtime-registry.v1.edge',
);

/**
 * An edge request: one report, a batch (see EdgeBatch), or one of the gateway's reads (its
 * sessions, see EdgeSessionsRead; its clients, see EdgeGatewayClientsRead). A batch's envelope is
 * checked here; its reports one by one with `parseEdgeReport`, so an invalid one fails alone
 * (ValidationFailed) and ends its sequence like any other failure.
 */
export function parseEdge(
  value: unknown,
):
  | { report: EdgeReport }
  | { batch: EdgeBatch }
  | { sessions: EdgeSessionsRead }
  | { gatewayClients: EdgeGatewayClientsRead } {
  const r = edgeEnvelope.parse(value) as { report: { kind?: unknown } };
  if (r.report.kind === 'gateway.sessions')
    return { sessions: sessionsRead.parse(r.report) as unknown as EdgeSessionsRead };
  if (r.report.kind === 'gateway.clients')
    return { gatewayClients: gatewayClientsRead.parse(r.report) as unknown as EdgeGatewayClientsRead };
  if (r.report.kind === 'batch') {
    const batch = batchEnvelope.parse(r.report) as unknown as EdgeBatch;
    const total = batch.sequences.reduce((n, s) => n + s.length, 0);
    if (total > EDGE_BATCH_MAX_REPORTS)
      throw new ContractViolation('runtime-registry.v1.edge', [
        { field: 'report.sequences', message: `at most ${EDGE_BATCH_MAX_REPORTS} reports in all` },
      ]);
    return { batch };
  }
  return { report: parseEdgeReport(r.report, 'report') };
}

export function parseEdgeReport(value: unknown, path: string): EdgeReport {
  checkEdge(value, path);
  return value as EdgeReport;
}

/**
 * A media server's id is interface A's `mediaServerId` (a uuid in the paths and the statistics), so
 * it must be one, and is kept lower-cased as the gateway passes path ids on: otherwise the server
 * would be listed but could never be read or disabled.
 */
export function parseHeartbeat(value: unknown): Heartbeat & { type?: string } {
  const hb = heartbeatValidator.parse(value) as unknown as Heartbeat & { type?: string };
  if (hb.role === 'mediaserver') {
    if (!isUuid(hb.server.id))
      throw new ContractViolation('runtime-registry.v1.heartbeat', [
        { field: 'server.id', message: 'must be a UUID (the mediaServerId of interface A)' },
      ]);
    hb.server.id = hb.server.id.toLowerCase();
  }
  return hb;
}
