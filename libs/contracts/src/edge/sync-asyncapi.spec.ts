/**
 * The AsyncAPI document of `/sync` as generated: an operation per request and per push, error codes
 * per request, close codes, references that resolve; and docs/sync-protocol.md lists the same error
 * codes per request. (The gateway's asyncapi.integration-spec.ts runs the served document through
 * @asyncapi/parser.)
 */
import { readFileSync } from 'node:fs';
import {
  buildSyncAsyncApi,
  SYNC_ANY_REQUEST_ERRORS,
  SYNC_CLOSE_CODES,
  SYNC_ERROR_CODES,
  SYNC_PUSH_TYPES,
  SYNC_REQUEST_ERRORS,
  SYNC_REQUEST_TYPES,
} from './index.js';

type Json = Record<string, any>;
const doc = buildSyncAsyncApi({ url: 'ws://127.0.0.1:8080/sync' }) as Json;

/** Follows a local `$ref` (`#/a/b`). */
function resolve(ref: string): Json {
  return ref
    .slice(2)
    .split('/')
    .reduce<any>((node, part) => node?.[part], doc);
}
function deref(node: Json): Json {
  return node.$ref ? deref(resolve(node.$ref)) : node;
}
function refsIn(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refsIn(n, out));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') out.push(value);
      else refsIn(value, out);
    }
  }
  return out;
}
/** The codes an error message's payload allows. */
function codesOf(message: Json): string[] {
  return deref(message.payload).properties.error.properties.code.anyOf.map((c: Json) => c.const);
}

describe('the /sync AsyncAPI document', () => {
  it('is AsyncAPI 3 with the protocol version and a WebSocket server', () => {
    expect(doc.asyncapi).toBe('3.0.0');
    expect(doc.info.version).toBe('2');
    expect(doc.servers.gateway).toEqual(expect.objectContaining({ host: '127.0.0.1:8080', protocol: 'ws' }));
    expect(doc.channels.sync.address).toBe('/sync');
  });

  it('keeps a path prefix of the public URL on the server', () => {
    const behindProxy = buildSyncAsyncApi({ url: 'wss://edge.example.com/rt/sync' }) as Json;
    expect(behindProxy.servers.gateway).toEqual(
      expect.objectContaining({ host: 'edge.example.com', protocol: 'wss', pathname: '/rt' }),
    );
  });

  it.each([...SYNC_REQUEST_TYPES])('receives %s, replying with its result or its error codes', (type) => {
    const operation = doc.operations[type];
    expect(operation.action).toBe('receive');
    const request = deref(operation.messages[0]);
    expect(deref(request.payload).properties.type.const).toBe(type);
    const [result, error] = operation.reply.messages.map(deref);
    expect(deref(result.payload).properties.type.const).toBe('result');
    expect(deref(result.payload).properties.data).toEqual(expect.any(Object));
    expect(codesOf(error).sort()).toEqual(
      Object.keys({ ...SYNC_ANY_REQUEST_ERRORS, ...SYNC_REQUEST_ERRORS[type] }).sort(),
    );
  });

  it('lists the refusals of the requests a third party asked about', () => {
    const errorOf = (type: string) => deref(doc.operations[type].reply.messages[1]);
    expect(codesOf(errorOf('join'))).toEqual(expect.arrayContaining(['Forbidden', 'AlreadyJoined', 'TokenInvalid']));
    expect(errorOf('connection.open').description).toMatch(/`Unavailable`: No media server available/);
    expect(codesOf(errorOf('message'))).toEqual(expect.arrayContaining(['NotJoined', 'Forbidden']));
    const tokenInvalid = deref(errorOf('register').payload).properties.error.properties.code.anyOf.find(
      (c: Json) => c.const === 'TokenInvalid',
    );
    expect(tokenInvalid['x-close-code']).toBe(4001);
  });

  it.each([...SYNC_PUSH_TYPES])('sends the %s push', (type) => {
    const operation = doc.operations[`push.${type}`];
    expect(operation.action).toBe('send');
    const payload = deref(deref(operation.messages[0]).payload);
    expect(payload.properties.type.const).toBe('push');
    expect(deref(payload.properties.push).properties.type.const).toBe(type);
  });

  it('describes every close code', () => {
    expect(Object.keys(doc.channels.sync['x-close-codes']).sort()).toEqual(
      Object.values(SYNC_CLOSE_CODES).map(String).sort(),
    );
  });

  it('references only what it holds, and every operation message is a message of the channel', () => {
    for (const ref of refsIn(doc)) expect([ref, resolve(ref)]).toEqual([ref, expect.any(Object)]);
    expect(JSON.stringify(doc)).not.toContain('"$id"');
    const channelMessages = Object.keys(doc.channels.sync.messages).map((key) => `#/channels/sync/messages/${key}`);
    for (const operation of Object.values(doc.operations) as Json[]) {
      for (const message of [...operation.messages, ...(operation.reply?.messages ?? [])])
        expect(channelMessages).toContain(message.$ref);
    }
  });

  it('agrees with the table of docs/sync-protocol.md, "Errors of each request"', () => {
    const text = readFileSync(new URL('../../../../docs/sync-protocol.md', import.meta.url), 'utf8');
    const table = /<!-- sync-request-errors:start -->([\s\S]*?)<!-- sync-request-errors:end -->/.exec(text)![1]!;
    const documented = Object.fromEntries(
      [...table.matchAll(/^\| `([a-z.]+)` \|(.*)\|$/gm)].map(([, type, cell]) => [
        type,
        [...new Set([...cell!.matchAll(/`([A-Za-z]+)`/g)].map((m) => m[1]!))]
          .filter((code) => (SYNC_ERROR_CODES as readonly string[]).includes(code))
          .sort(),
      ]),
    );
    const expected = Object.fromEntries(
      SYNC_REQUEST_TYPES.map((type) => [type, Object.keys(SYNC_REQUEST_ERRORS[type]).sort()]),
    );
    expect(documented).toEqual(expected);
  });
});
