/**
 * NATS contract of the management API beyond `messaging/runtime.ts`: the applications.changed
 * notice and the interface B reads other services answer (docs/management-messaging.md). The
 * subjects join `RequestMap` by declaration merging below, so `NatsClient.request` types them.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { ConnectionRecording } from '../interface-a/recordings.js';
import { Int64, Nullable, StringEnum, Uuid, record } from '../interface-a/record-schema.js';
import { CallerScope } from '../messaging/subjects.js';
import type { UsageRecord } from './records.js';
import type { ManagementChannelRecording } from './responses.js';

/**
 * Data of `management-api.v1.organizations.changed` (core NATS, same packet shape): published after an
 * organization was created, disabled or enabled, so that replicas caching API key verdicts drop them.
 */
export interface OrganizationChangedEvent {
  organizationId: string;
}

/** Data of `management-api.v1.applications.changed`. */
export interface ApplicationChangedEvent {
  applicationId: string;
}

export const ManagementReadSubjects = {
  usageList: 'usage-aggregator.v1.usage.list',
  channelRecordingsList: 'recording-service.v1.channel-recordings.list',
  channelRecordingGet: 'recording-service.v1.channel-recordings.get',
  channelRecordingDelete: 'recording-service.v1.channel-recordings.delete',
  channelRecordingRead: 'recording-service.v1.channel-recordings.read',
  connectionRecordingsList: 'recording-service.v1.connection-recordings.list',
  connectionRecordingGet: 'recording-service.v1.connection-recordings.get',
  connectionRecordingRead: 'recording-service.v1.connection-recordings.read',
  storageUsedSize: 'recording-service.v1.storage.used-size',
} as const;

const option = () => Type.Optional(Type.String({ maxLength: 8192 }));

/** The client's OData options, passed through (see the header of this file). */
export const ForwardedQueryOptions = record(
  'ForwardedQueryOptions',
  {
    $filter: option(),
    $orderby: option(),
    $top: option(),
    $skip: option(),
    $count: option(),
    $select: option(),
    $expand: option(),
  },
  'OData query options of an interface B list or read, as the client wrote them.',
);
export type ForwardedQueryOptions = Static<typeof ForwardedQueryOptions>;

const ApplicationId = Type.String({ minLength: 1, maxLength: 256 });
const ChannelId = Type.String({ minLength: 1, maxLength: 256 });

export const UsageListRequest = record(
  'UsageListRequest',
  {
    scope: CallerScope,
    applicationId: ApplicationId,
    startTimestamp: Nullable(Int64({ minimum: 0, description: 'Unix ms, inclusive; null: from the first record.' })),
    endTimestamp: Nullable(Int64({ minimum: 0, description: 'Unix ms, exclusive; null: up to now.' })),
    query: ForwardedQueryOptions,
  },
  'List the usage records of an application (GET /Usage).',
);
export type UsageListRequest = Static<typeof UsageListRequest>;

export const ChannelRecordingsListRequest = record(
  'ChannelRecordingsListRequest',
  { scope: CallerScope, applicationId: ApplicationId, query: ForwardedQueryOptions },
  'List the channel recordings of an application (GET /ChannelRecordings/{applicationId}).',
);
export type ChannelRecordingsListRequest = Static<typeof ChannelRecordingsListRequest>;

export const ChannelRecordingRef = record(
  'ChannelRecordingRef',
  { scope: CallerScope, applicationId: ApplicationId, channelId: ChannelId, channelRecordingId: Uuid() },
  'One channel recording (get, delete).',
);
export type ChannelRecordingRef = Static<typeof ChannelRecordingRef>;

export const ChannelRecordingGetRequest = record(
  'ChannelRecordingGetRequest',
  { ...ChannelRecordingRef.properties, query: Type.Optional(ForwardedQueryOptions) },
  'Get one channel recording, with the `$select` and `$expand` of the read (GET /ChannelRecordings/{applicationId}/{channelId}/{channelRecordingId}).',
);
export type ChannelRecordingGetRequest = Static<typeof ChannelRecordingGetRequest>;

export const CHANNEL_RECORDING_READS = ['MuxJson', 'Url', 'AudioUrl', 'VideoUrl'] as const;
export const ChannelRecordingReadRequest = record(
  'ChannelRecordingReadRequest',
  { ...ChannelRecordingRef.properties, what: StringEnum(CHANNEL_RECORDING_READS) },
  'A string-valued read of a channel recording: its mux JSON or one of its URLs.',
);
export type ChannelRecordingReadRequest = Static<typeof ChannelRecordingReadRequest>;

export const ConnectionRecordingsListRequest = record(
  'ConnectionRecordingsListRequest',
  { scope: CallerScope, applicationId: ApplicationId, query: ForwardedQueryOptions },
  'List the connection recordings of an application (GET /ConnectionRecordings/{applicationId}).',
);
export type ConnectionRecordingsListRequest = Static<typeof ConnectionRecordingsListRequest>;

export const ConnectionRecordingRef = record(
  'ConnectionRecordingRef',
  { scope: CallerScope, applicationId: ApplicationId, connectionRecordingId: Uuid() },
  'One connection recording.',
);
export type ConnectionRecordingRef = Static<typeof ConnectionRecordingRef>;

export const ConnectionRecordingGetRequest = record(
  'ConnectionRecordingGetRequest',
  { ...ConnectionRecordingRef.properties, query: Type.Optional(ForwardedQueryOptions) },
  'Get one connection recording, with the `$select` and `$expand` of the read (GET /ConnectionRecordings/{applicationId}/{connectionRecordingId}).',
);
export type ConnectionRecordingGetRequest = Static<typeof ConnectionRecordingGetRequest>;

export const CONNECTION_RECORDING_READS = ['Url', 'AudioUrl', 'VideoUrl'] as const;
export const ConnectionRecordingReadRequest = record(
  'ConnectionRecordingReadRequest',
  { ...ConnectionRecordingRef.properties, what: StringEnum(CONNECTION_RECORDING_READS) },
  'A string-valued read of a connection recording: one of its URLs.',
);
export type ConnectionRecordingReadRequest = Static<typeof ConnectionRecordingReadRequest>;

export const StorageUsedSizeRequest = record(
  'StorageUsedSizeRequest',
  {
    scope: CallerScope,
    applicationIds: Type.Array(ApplicationId, {
      description: 'The applications counted: one, or every application of the organization.',
    }),
  },
  'Bytes of recording storage used (GET /RecordingStorage/UsedSize[/{applicationId}]).',
);
export type StorageUsedSizeRequest = Static<typeof StorageUsedSizeRequest>;

export interface ODataListResponse<T> {
  value: T[];
  '@odata.count'?: number;
}

export interface ManagementReadRequestMap {
  'usage-aggregator.v1.usage.list': { request: UsageListRequest; response: ODataListResponse<UsageRecord> };
  'recording-service.v1.channel-recordings.list': {
    request: ChannelRecordingsListRequest;
    response: ODataListResponse<ManagementChannelRecording>;
  };
  'recording-service.v1.channel-recordings.get': {
    request: ChannelRecordingGetRequest;
    response: ManagementChannelRecording;
  };
  'recording-service.v1.channel-recordings.delete': { request: ChannelRecordingRef; response: null };
  'recording-service.v1.channel-recordings.read': { request: ChannelRecordingReadRequest; response: string };
  'recording-service.v1.connection-recordings.list': {
    request: ConnectionRecordingsListRequest;
    response: ODataListResponse<ConnectionRecording>;
  };
  'recording-service.v1.connection-recordings.get': {
    request: ConnectionRecordingGetRequest;
    response: ConnectionRecording;
  };
  'recording-service.v1.connection-recordings.read': { request: ConnectionRecordingReadRequest; response: string };
  'recording-service.v1.storage.used-size': { request: StorageUsedSizeRequest; response: number };
}

declare module '../messaging/subjects.js' {
  // Declaration merging: the subjects above join the typed request map.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface RequestMap extends ManagementReadRequestMap {}
}
