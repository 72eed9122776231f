/** Validation of recording-service requests (envelope, kind, the kind's parameters) and its subjects' types. */
import { Type, type TObject, type TProperties } from '@sinclair/typebox';
import { ContractViolation, validator } from '../validation/validate.js';
import { CallerScope } from './subjects.js';
import type { ChannelRecordingSettings, ChannelRecordingSettingsRequest } from './recording-pipeline.js';
import {
  RECORDING_COMMAND_PARAMS,
  RECORDING_QUERY_PARAMS,
  type RecordingCommand,
  type RecordingQuery,
} from './recordings.js';

function kindSchema<K extends string, P extends TProperties>(kind: K, props: P) {
  return Type.Object(
    { kind: Type.Literal(kind), ...props },
    { additionalProperties: false, $id: `RecordingQuery:${kind}` },
  );
}

// ---------------------------------------------------------------------------------------------
// Request validation
// ---------------------------------------------------------------------------------------------

export interface RecordingQueryRequest {
  scope: CallerScope;
  query: RecordingQuery;
}
export interface RecordingCommandRequest {
  scope: CallerScope;
  command: RecordingCommand;
}

const querySchemas = Object.fromEntries(
  Object.entries(RECORDING_QUERY_PARAMS).map(([kind, props]) => [kind, kindSchema(kind, props)]),
);
const commandSchemas = Object.fromEntries(
  Object.entries(RECORDING_COMMAND_PARAMS).map(([kind, props]) => [kind, kindSchema(kind, props)]),
);
const envelope = (body: 'query' | 'command') =>
  Type.Object(
    { scope: CallerScope, [body]: Type.Object({ kind: Type.String() }, { additionalProperties: true }) },
    { additionalProperties: false },
  );
const queryEnvelope = validator(envelope('query'), 'RecordingQueryRequest');
const commandEnvelope = validator(envelope('command'), 'RecordingCommandRequest');

function parseKind(
  value: unknown,
  body: 'query' | 'command',
  schemas: Record<string, TObject>,
  env: typeof queryEnvelope,
) {
  const outer = env.parse(value) as Record<string, unknown>;
  const inner = outer[body] as { kind: string };
  const schema = schemas[inner.kind];
  if (!schema)
    throw new ContractViolation(env.name, [
      { field: `${body}.kind`, message: `unknown ${body} kind "${String(inner.kind).slice(0, 64)}"` },
    ]);
  try {
    validator(schema, `${body} ${inner.kind}`).parse(inner);
  } catch (e) {
    if (e instanceof ContractViolation)
      throw new ContractViolation(
        e.contract,
        e.errors.map((x) => ({ ...x, field: x.field ? `${body}.${x.field}` : body })),
      );
    throw e;
  }
  return outer;
}

/** Validates a query request: the envelope, the kind, and the kind's parameters (unknown fields rejected). */
export function parseRecordingQueryRequest(value: unknown): RecordingQueryRequest {
  return parseKind(value, 'query', querySchemas, queryEnvelope) as unknown as RecordingQueryRequest;
}

export function parseRecordingCommandRequest(value: unknown): RecordingCommandRequest {
  return parseKind(value, 'command', commandSchemas, commandEnvelope) as unknown as RecordingCommandRequest;
}

export interface RecordingRequestMap {
  'recording-service.v1.query': { request: RecordingQueryRequest; response: unknown };
  'recording-service.v1.command': { request: RecordingCommandRequest; response: null };
  'management-api.v1.channel-configs.recording': {
    request: ChannelRecordingSettingsRequest;
    response: ChannelRecordingSettings;
  };
}

declare module './subjects.js' {
  interface RequestMap extends RecordingRequestMap {}
}
