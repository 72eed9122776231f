/**
 * Hostile /sync frames: for every request type of SYNC_REQUEST_DATA, every string leaf of its data
 * with NUL, lone surrogates and an overlong value, every integer leaf out of range, wrong types and
 * unknown fields; plus frames that are not requests at all. Valid values come from the session the
 * frames are sent on, so the hostile leaf is the only thing wrong with each frame.
 */
import { SYNC_REQUEST_DATA, type SyncRequestType } from '@switchboard/contracts';
import { HOSTILE_INTEGERS, HOSTILE_STRINGS, leavesOf, minimalValue, type OpenApiDocument } from './corpus.js';

export interface HostileFrame {
  category: string;
  type: SyncRequestType | null;
  /** The frame's id as the gateway should echo it; null when the frame has no readable id. */
  id: string | number | null;
  text: string | Buffer;
  binary?: boolean;
}

/** TypeBox schemas are JSON schemas with inline children: the OpenAPI walker reads them with an empty document. */
const NO_COMPONENTS: OpenApiDocument = { paths: {} };

/** Valid values by field name, from the live session (channelId joined, connectionId open, token good). */
export type SessionValues = Record<string, unknown>;

let sequence = 0;
const nextId = (category: string) =>
  `h${(sequence++).toString(36)}-${category.replace(/[^a-z0-9]/gi, '').slice(0, 40)}`;

const LEAF = '__hostile_leaf__';

/** `value` with the session's valid values in the fields it names, except the attacked leaf. */
function withSession(value: unknown, session: SessionValues): unknown {
  if (Array.isArray(value)) return value.map((item) => withSession(item, session));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      key in session && typeof item !== 'object' && item !== LEAF ? session[key] : withSession(item, session),
    ]),
  );
}

/** The frames attacking one request type's data. */
export function hostileFramesFor(type: SyncRequestType, session: SessionValues): HostileFrame[] {
  const schema = SYNC_REQUEST_DATA[type] as never;
  const frames: HostileFrame[] = [];
  const frame = (category: string, data: unknown, rawData?: string) => {
    const id = nextId(`${type}-${category}`);
    frames.push({
      category,
      type,
      id,
      text:
        rawData === undefined
          ? JSON.stringify({ id, type, data })
          : `{"id":${JSON.stringify(id)},"type":${JSON.stringify(type)},"data":${rawData}}`,
    });
  };
  const base = withSession(minimalValue(NO_COMPONENTS, schema), session) as Record<string, unknown>;
  for (const leaf of leavesOf(NO_COMPONENTS, schema)) {
    const json = (text: string) => JSON.stringify(withSession(leaf.body(LEAF), session)).replace(`"${LEAF}"`, text);
    if (leaf.kind === 'string') {
      for (const [label, value] of Object.entries(HOSTILE_STRINGS))
        frame(`string:${label}:${leaf.path}`, undefined, json(JSON.stringify(value)));
      // Over the field's limit, where that still fits in a frame (SYNC_MAX_FRAME_BYTES, 64 KiB).
      if (leaf.maxLength !== undefined && leaf.maxLength < 60_000)
        frame(`string:overlong:${leaf.path}`, undefined, json(JSON.stringify('x'.repeat(leaf.maxLength + 1))));
      frame(`wrong-type:${leaf.path}`, undefined, json('12'));
    } else {
      for (const [label, text] of Object.entries({
        ...HOSTILE_INTEGERS,
        ...(leaf.nonNegative ? { negative: '-1' } : {}),
      }))
        frame(`integer:${label}:${leaf.path}`, undefined, json(text));
      frame(`wrong-type:${leaf.path}`, undefined, json('"12"'));
    }
  }
  frame('unknown-field', { ...base, unknownHostileField: 1 });
  frame('data-string', 'x');
  frame('data-array', []);
  frame('data-number', undefined, '1e400');
  if (Object.keys(base).length > 0) frame('data-null', null);
  return frames;
}

/**
 * Frames that are not requests: not JSON, binary, bad ids and types. Answered with `id: null` (or the id when
 * readable).
 */
export function malformedFrames(): HostileFrame[] {
  const frames: HostileFrame[] = [
    { category: 'frame:not-json', type: null, id: null, text: '{"id":' },
    {
      category: 'frame:binary',
      type: null,
      id: null,
      text: Buffer.from(JSON.stringify({ id: 'b1', type: 'ping' })),
      binary: true,
    },
    { category: 'frame:array', type: null, id: null, text: '[]' },
    { category: 'frame:null', type: null, id: null, text: 'null' },
    { category: 'frame:string', type: null, id: null, text: '"ping"' },
  ];
  const idCases: Array<[string, string]> = [
    ['id-nul', '"a\\u0000b"'],
    ['id-lone-surrogate', '"a\\ud800b"'],
    ['id-overlong', JSON.stringify('x'.repeat(65))],
    ['id-negative', '-1'],
    ['id-int64-overflow', '9223372036854775808'],
    ['id-infinite', '1e400'],
    ['id-fraction', '1.5'],
    ['id-object', '{}'],
  ];
  for (const [label, idText] of idCases)
    frames.push({ category: `frame:${label}`, type: null, id: null, text: `{"id":${idText},"type":"ping"}` });
  for (const [label, typeText] of [
    ['type-unknown', '"no.such.type"'],
    ['type-nul', '"ping\\u0000"'],
    ['type-lone-surrogate', '"ping\\udfff"'],
    ['type-number', '7'],
  ] as const) {
    const id = nextId(label);
    frames.push({
      category: `frame:${label}`,
      type: null,
      id,
      text: `{"id":${JSON.stringify(id)},"type":${typeText}}`,
    });
  }
  const missing = nextId('type-missing');
  frames.push({ category: 'frame:type-missing', type: null, id: missing, text: JSON.stringify({ id: missing }) });
  return frames;
}
