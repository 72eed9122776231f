/**
 * The AsyncAPI 3.0 document of `/sync`, generated from the frame schemas of this folder: one `receive`
 * operation per request (its frame, its result and error frames as the reply, the error codes it can
 * get), one `send` operation per push, the unsolicited error frame, and the close codes.
 */
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { SYNC_CLOSE_MEANINGS } from './sync-close-codes.js';
import { SYNC_PUSH_EXAMPLES, SYNC_REQUEST_EXAMPLES } from './sync-examples.js';
import {
  SYNC_PATH,
  SYNC_PROTOCOL_VERSION,
  SYNC_REQUEST_DATA,
  SYNC_REQUEST_TYPES,
  SyncErrorBody,
  type SyncErrorCode,
  type SyncRequestType,
} from './sync-frames.js';
import { SYNC_PUSHES, SYNC_PUSH_TYPES } from './sync-pushes.js';
import { SYNC_ANY_REQUEST_ERRORS, SYNC_REQUEST_ERRORS, type SyncRefusals } from './sync-request-errors.js';
import { SYNC_RESULT_DATA } from './sync-results.js';

export interface SyncAsyncApiOptions {
  /** Where clients reach `/sync` (`ws:` or `wss:`), e.g. the gateway's SYNC_PUBLIC_URL. */
  url: string;
}

type Json = Record<string, unknown>;

const FrameId = Type.Union(
  [Type.String({ minLength: 1, maxLength: 64 }), Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })],
  { description: 'Chosen by the client, echoed in the answer.' },
);
const CORRELATION = { location: '$message.payload#/id', description: 'The `id` of the request, echoed.' };

/** Builds the document; every schema with an `$id` lands once in `components.schemas`. */
export function buildSyncAsyncApi(options: SyncAsyncApiOptions): Json {
  const schemas: Json = {};
  const payload = (schema: TSchema): Json => collect(JSON.parse(JSON.stringify(schema)) as Json, schemas);
  const messages: Json = {};
  const operations: Json = {};
  const channelRef = { $ref: '#/channels/sync' };
  const messageRef = (key: string) => ({ $ref: `#/channels/sync/messages/${key}` });

  for (const type of SYNC_REQUEST_TYPES) {
    const request = `${type}.request`;
    const result = `${type}.result`;
    const error = `${type}.error`;
    messages[request] = requestMessage(type, payload);
    messages[result] = resultMessage(type, payload);
    messages[error] = errorMessage(type, payload);
    operations[type] = {
      action: 'receive',
      channel: channelRef,
      title: type,
      summary: SYNC_REQUEST_DATA[type].description,
      messages: [messageRef(request)],
      reply: { channel: channelRef, messages: [messageRef(result), messageRef(error)] },
    };
  }
  for (const type of SYNC_PUSH_TYPES) {
    const key = `push.${type}`;
    const push = SYNC_PUSHES[type] as TObject;
    messages[key] = {
      name: key,
      title: `${type} push`,
      summary: push.description,
      payload: payload(frame('push', { push })),
      examples: [{ name: type, payload: { type: 'push', push: SYNC_PUSH_EXAMPLES[type] } }],
    };
    operations[key] = { action: 'send', channel: channelRef, title: `${type} push`, messages: [messageRef(key)] };
  }
  messages['frame.error'] = frameErrorMessage(payload);
  operations['frame.error'] = {
    action: 'send',
    channel: channelRef,
    title: 'refused frame',
    summary: 'An error frame for a frame that could not be read as a request (`id` null when unreadable).',
    messages: [messageRef('frame.error')],
  };

  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Switchboard client edge (/sync)',
      version: String(SYNC_PROTOCOL_VERSION),
      description:
        'The WebSocket protocol live clients speak with the admin-gateway: one JSON text message per frame. ' +
        'Requests `{id, type, data}` are answered in order by one `result` or `error` frame with the same `id`; ' +
        'pushes `{type: "push", push}` come at any time, also between a request and its answer. ' +
        'Narrative, session flow, resume and backpressure: docs/sync-protocol.md.',
    },
    defaultContentType: 'application/json',
    servers: { gateway: server(options.url) },
    channels: {
      sync: {
        address: SYNC_PATH,
        title: '/sync',
        description: 'One socket per client session. Close codes: see `x-close-codes`.',
        messages: Object.fromEntries(
          Object.keys(messages).map((key) => [key, { $ref: `#/components/messages/${key}` }]),
        ),
        bindings: { ws: { bindingVersion: '0.1.0' } },
        'x-close-codes': SYNC_CLOSE_MEANINGS,
      },
    },
    operations,
    components: { schemas, messages },
  };
}

function server(url: string): Json {
  const parsed = new URL(url);
  const prefix = parsed.pathname.endsWith(SYNC_PATH) ? parsed.pathname.slice(0, -SYNC_PATH.length) : '';
  return {
    host: parsed.host,
    protocol: parsed.protocol.replace(/:$/, ''),
    ...(prefix ? { pathname: prefix } : {}),
    description: 'This gateway replica (any replica serves any client; a session lives on the one it registered on).',
  };
}

/** `{type, ...fields}` of a server frame, closed like every schema of the contract. */
function frame(type: string, fields: Record<string, TSchema>, description?: string): TObject {
  return Type.Object(
    { type: Type.Literal(type), ...fields },
    { additionalProperties: false, ...(description ? { description } : {}) },
  );
}

type Payload = (schema: TSchema) => Json;

function requestMessage(type: SyncRequestType, payload: Payload): Json {
  const data = SYNC_REQUEST_DATA[type] as TObject;
  const takesNothing = Object.keys(data.properties).length === 0;
  const example = { id: 7, type, ...(takesNothing ? {} : { data: SYNC_REQUEST_EXAMPLES[type].data }) };
  const schema = Type.Object(
    {
      id: FrameId,
      type: Type.Literal(type),
      data: takesNothing ? Type.Optional(data) : data,
    },
    { additionalProperties: false },
  );
  return {
    name: `${type}.request`,
    title: `${type} request`,
    summary: data.description,
    correlationId: CORRELATION,
    payload: payload(schema),
    examples: [{ name: type, payload: example }],
  };
}

function resultMessage(type: SyncRequestType, payload: Payload): Json {
  const data = SYNC_RESULT_DATA[type] as TObject;
  return {
    name: `${type}.result`,
    title: `${type} result`,
    summary: data.description,
    correlationId: CORRELATION,
    payload: payload(Type.Object({ type: Type.Literal('result'), id: FrameId, data }, { additionalProperties: false })),
    examples: [{ name: type, payload: { type: 'result', id: 7, data: SYNC_REQUEST_EXAMPLES[type].result } }],
  };
}

function errorMessage(type: SyncRequestType, payload: Payload): Json {
  const refusals: SyncRefusals = { ...SYNC_ANY_REQUEST_ERRORS, ...SYNC_REQUEST_ERRORS[type] };
  return {
    name: `${type}.error`,
    title: `${type} refused`,
    summary: `The ${type} request is refused: \`error.code\` is one of ${Object.keys(refusals).length} codes.`,
    description: refusalList(refusals),
    correlationId: CORRELATION,
    payload: payload(errorFrame(refusals, FrameId)),
  };
}

function frameErrorMessage(payload: Payload): Json {
  const refusals: SyncRefusals = {
    InvalidFrame: {
      when: 'Not JSON, a binary frame, or not a request frame; `id` is the frame\u2019s when it could be read.',
    },
    TooManyRequests: SYNC_ANY_REQUEST_ERRORS.TooManyRequests,
  };
  return {
    name: 'frame.error',
    title: 'refused frame',
    description: refusalList(refusals),
    payload: payload(errorFrame(refusals, Type.Union([FrameId, Type.Null()]))),
  };
}

/** An error frame whose `error.code` is one of `refusals`, each a `const` carrying its `when` (and close code). */
function errorFrame(refusals: SyncRefusals, id: TSchema): TObject {
  const codes = Object.entries(refusals).map(([code, refusal]) =>
    Type.Literal(code, {
      description: refusal?.when,
      ...(refusal?.closeCode ? { 'x-close-code': refusal.closeCode } : {}),
    }),
  );
  const { message, details } = SyncErrorBody.properties;
  const error = Type.Object(
    { code: Type.Union(codes), message, details },
    { additionalProperties: false, description: SyncErrorBody.description },
  );
  return frame('error', { id, error });
}

function refusalList(refusals: SyncRefusals): string {
  return (Object.entries(refusals) as Array<[SyncErrorCode, NonNullable<SyncRefusals[SyncErrorCode]>]>)
    .map(([code, r]) => `- \`${code}\`: ${r.when}${r.closeCode ? ` Then the socket closes with ${r.closeCode}.` : ''}`)
    .join('\n');
}

/** Moves every nested schema with an `$id` into `schemas` and replaces it with a `$ref`. */
function collect(node: Json, schemas: Json): Json {
  for (const [key, value] of Object.entries(node)) {
    if (Array.isArray(value))
      node[key] = value.map((item: unknown) => (isObject(item) ? collect(item, schemas) : item));
    else if (isObject(value)) node[key] = collect(value, schemas);
  }
  if (typeof node.$id !== 'string') return node;
  const { $id, ...rest } = node;
  schemas[$id] = rest;
  return { $ref: `#/components/schemas/${$id}` };
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null;
}
