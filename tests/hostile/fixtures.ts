/**
 * What the hostile requests need to exist: an application config and its live application (a
 * client registered over /sync, joined to a channel, with an open connection), so that path ids
 * other than the attacked one are valid and every refusal is about the hostile input alone.
 */
import { randomUUID } from 'node:crypto';
import type { HostileStack } from './stack.js';
import { SyncSocket } from './sync-session.js';

export interface Fixtures {
  applicationConfigId: string;
  applicationId: string;
  channelId: string;
  userId: string;
  deviceId: string;
  clientId: string;
  connectionId: string;
  apiKeyId: string;
  changeRecordId: string;
  /** A `register` token of the client. */
  registerToken: string;
  /** The registered socket: joined to channelId, connectionId open. */
  session: SyncSocket;
  syncUrl: string;
  /** A new registered session (resumed, or registered, joined and opened again) after `session` was closed. */
  reconnect(): Promise<SyncSocket>;
}

/** Registers the client on a new socket; joins and opens the connection unless the register resumed them. */
async function openSession(
  syncUrl: string,
  registerToken: string,
  channelId: string,
  connectionId: string,
): Promise<SyncSocket> {
  const session = await SyncSocket.open(syncUrl);
  const registered = await session.request('register', { token: registerToken });
  if (registered?.type !== 'result') throw new Error(`register failed: ${JSON.stringify(registered)}`);
  if (registered.data.resumed && registered.data.connections.length > 0) return session;
  for (const [type, data] of [
    ['join', { channelId }],
    [
      'connection.open',
      {
        channelId,
        connectionId,
        type: 'peer',
        streams: { audio: { direction: 'sendrecv' }, video: { direction: 'sendrecv', maxPixelCount: 921600 } },
      },
    ],
  ] as const) {
    const answer = await session.request(type, data);
    if (answer?.type !== 'result' && !(registered.data.resumed && answer?.type === 'error'))
      throw new Error(`${type} failed: ${JSON.stringify(answer)}`);
  }
  return session;
}

async function management<T = any>(stack: HostileStack, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${stack.managementUrl}${path}`, {
    method,
    headers: { 'x-api-key': stack.operatorKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

export async function createFixtures(stack: HostileStack): Promise<Fixtures> {
  const applicationId = `app-${stack.ns}`;
  const channelId = 'hostile-room';
  const [userId, deviceId, clientId, connectionId] = [
    'hostile-user',
    'hostile-device',
    'hostile-client',
    'hostile-connection',
  ];
  const config = await management<{ id: string }>(stack, 'POST', '/ApplicationConfigs', {
    applicationId,
    tag: 'hostile corpus',
  });
  const apiKey = await management<{ id: string }>(stack, 'POST', '/ApiKeys', { tag: 'hostile corpus' });
  const changes = await management<{ value: Array<{ id: string }> }>(stack, 'GET', '/ChangeRecords?$top=1');
  const claims = { userId, deviceId, clientId, clientRoles: ['participant'], channelClaims: [{ id: channelId }] };
  const registerToken = (
    await management<{ value: string }>(stack, 'POST', `/ApplicationConfigs/${config.id}/Token`, claims)
  ).value;
  const syncUrl = `${stack.gatewayUrl.replace('http', 'ws')}/sync`;
  const fixtures: Fixtures = {
    applicationConfigId: config.id,
    applicationId,
    channelId,
    userId,
    deviceId,
    clientId,
    connectionId,
    apiKeyId: apiKey.id,
    changeRecordId: changes.value[0]?.id ?? randomUUID(),
    registerToken,
    session: await openSession(syncUrl, registerToken, channelId, connectionId),
    syncUrl,
    async reconnect() {
      fixtures.session = await openSession(syncUrl, registerToken, channelId, connectionId);
      return fixtures.session;
    },
  };
  return fixtures;
}

/** The valid value of each path parameter of interface A (unknown ones: ids that exist nowhere). */
export function interfaceAIds(f: Fixtures): Record<string, string> {
  return {
    applicationId: f.applicationId,
    channelId: f.channelId,
    userId: f.userId,
    deviceId: f.deviceId,
    clientId: f.clientId,
    connectionId: f.connectionId,
    mediaServerId: 'no-such-media-server',
    channelRecordingId: randomUUID(),
    connectionRecordingId: randomUUID(),
  };
}

/** The valid value of each path parameter of interface B for `template` (`{id}` depends on the entity set). */
export function interfaceBIds(f: Fixtures, organizationId: string, template: string): Record<string, string> {
  const set = template.split('/')[1];
  const idOfSet: Record<string, string> = {
    ApiKeys: f.apiKeyId,
    ApplicationConfigs: f.applicationConfigId,
    Organizations: organizationId,
    ChangeRecords: f.changeRecordId,
  };
  return {
    id: idOfSet[set ?? ''] ?? randomUUID(),
    applicationId: f.applicationId,
    channelId: f.channelId,
    channelRecordingId: randomUUID(),
    connectionRecordingId: randomUUID(),
  };
}
