/**
 * Interface A (runtime admin API) contracts, service-spec.md section 2.A.
 *
 * Export pattern (same in interface-b/ and webhooks/):
 * - each record is a TypeBox schema and a type of the same name:
 *   `export const ChannelSnapshot = record('ChannelSnapshot', {...}); export type ChannelSnapshot = Static<typeof
 * ChannelSnapshot>;`
 * - `InterfaceASchemas` names every object schema of this folder (the OpenAPI generator and the
 *   tests iterate it; a record missing from it fails a test);
 * - `InterfaceAValidators.<Name>` is the ready validator (`check` / `errors` / `parse`), compiled
 *   on first use.
 */
import {
  ApplicationEnvironment,
  ApplicationSnapshot,
  ChannelSnapshot,
  ClientInChannelSnapshot,
  ClientInfo,
  ConnectionError,
  ConnectionInfo,
  DataStreamInfo,
  DeviceInChannelSnapshot,
  DeviceInfo,
  EnvironmentServer,
  MediaFormatInfo,
  MediaServer,
  MediaServerComputer,
  MediaServerStatistics,
  MediaStreamInfo,
  MessageBody,
  ProblemBody,
  TransportInfo,
  UserInChannelSnapshot,
  UserInfo,
} from './runtime.js';
import { ChannelRecording, ConnectionRecording, RecordingUpdate } from './recordings.js';
import {
  ChannelPatch,
  ChannelRecordingPatch,
  ClientInChannelPatch,
  ClientPatch,
  ConnectionPatch,
  DeviceInChannelPatch,
  MediaServerPatch,
  UserInChannelPatch,
} from './patches.js';
import { validatorsFor } from './record-schema.js';

export * from './runtime.js';
export * from './recordings.js';
export * from './patches.js';
export {
  Count,
  DateTime,
  Int32,
  Int64,
  Nullable,
  OptionalNullable,
  SERVER_MANAGED_KEYWORD,
  StringEnum,
  Uuid,
  isUuid,
  validatorsFor,
  type SchemaRegistry,
  type Validators,
} from './record-schema.js';

export const InterfaceASchemas = {
  MessageBody,
  ProblemBody,
  ApplicationSnapshot,
  ChannelSnapshot,
  UserInChannelSnapshot,
  UserInfo,
  DeviceInChannelSnapshot,
  DeviceInfo,
  ClientInChannelSnapshot,
  ClientInfo,
  MediaServer,
  MediaServerComputer,
  MediaServerStatistics,
  ApplicationEnvironment,
  EnvironmentServer,
  ConnectionInfo,
  ConnectionError,
  MediaStreamInfo,
  DataStreamInfo,
  TransportInfo,
  MediaFormatInfo,
  ChannelRecording,
  ConnectionRecording,
  RecordingUpdate,
  ChannelRecordingPatch,
  ChannelPatch,
  UserInChannelPatch,
  DeviceInChannelPatch,
  ClientPatch,
  ClientInChannelPatch,
  ConnectionPatch,
  MediaServerPatch,
} as const;
export type InterfaceASchemaName = keyof typeof InterfaceASchemas;

export const InterfaceAValidators = validatorsFor(InterfaceASchemas);
