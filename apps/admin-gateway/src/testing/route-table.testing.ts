/**
 * Every interface A runtime route of http-contract.md that admin-gateway serves (the recording
 * routes belong to recording-service), with what it must ask runtime-registry.
 */
import type { RuntimeCommand, RuntimeQuery } from '@switchboard/contracts';

export const IDS = {
  applicationId: 'app-1',
  channelId: 'ch-1',
  userId: 'u-1',
  deviceId: 'd-1',
  clientId: 'cl-1',
  connectionId: 'cn-1',
  mediaServerId: '6f1c2a9e-1d2b-4c3d-8e4f-a0b1c2d3e4f5',
} as const;

const { applicationId, channelId, userId, deviceId, clientId, connectionId, mediaServerId } = IDS;
const A = `/applications/${applicationId}`;
const C = `${A}/channels/${channelId}`;
const UDC = `users/${userId}/devices/${deviceId}/clients/${clientId}`;
/** OpenAPI spellings of the same paths. */
const oA = '/applications/{applicationId}';
const oC = `${oA}/channels/{channelId}`;
const oUDC = 'users/{userId}/devices/{deviceId}/clients/{clientId}';

export const MESSAGE = { message: 'hello', userId: 'sender', clientRoles: ['host'] };

export interface RouteCase {
  name: string;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Path under the prefix, with the ids above. */
  path: string;
  /** The same path in the OpenAPI document. */
  doc: string;
  operator?: boolean;
  body?: Record<string, unknown>;
  /** A body that must be refused, and the fields the 400 must name. */
  badBody?: { body: unknown; fields: string[] };
  query?: RuntimeQuery;
  command?: RuntimeCommand;
}

/**
 * Parameterless kinds are cast: the contract types their params `Record<string, never>`, which no object with `kind`
 * satisfies.
 */
const q = (query: RuntimeQuery) => ({ query });
const message = (target: Extract<RuntimeCommand, { kind: 'message' }>['target']) => ({
  body: MESSAGE,
  badBody: { body: { message: 5, sender: 'x' }, fields: ['message', 'sender'] },
  command: { kind: 'message', origin: 'api', target, message: MESSAGE } as RuntimeCommand,
});
const kick = (target: Extract<RuntimeCommand, { kind: 'kick' }>['target']) => ({
  command: { kind: 'kick', origin: 'api', target } as RuntimeCommand,
});
const levelPatch = {
  recording: true,
  recordingTag: 'r',
  audioMuted: true,
  videoMuted: null,
  audioUnmuteDisabled: true,
};
const badLevelPatch = { body: { recording: 'yes', colour: 'red' }, fields: ['recording', 'colour'] };

export const ROUTES: RouteCase[] = [
  // Applications
  {
    name: 'list application ids',
    method: 'GET',
    path: '/applications',
    doc: '/applications',
    ...q({ kind: 'applications.list' } as RuntimeQuery),
  },
  { name: 'application snapshot', method: 'GET', path: A, doc: oA, ...q({ kind: 'application.get', applicationId }) },
  {
    name: 'message to an application',
    method: 'POST',
    path: `${A}/message`,
    doc: `${oA}/message`,
    ...message({ level: 'application', applicationId }),
  },
  {
    name: 'application environment',
    method: 'GET',
    path: `${A}/environment`,
    doc: `${oA}/environment`,
    ...q({ kind: 'application.environment', applicationId }),
  },
  // Channels
  {
    name: 'active channels',
    method: 'GET',
    path: `${A}/channels`,
    doc: `${oA}/channels`,
    ...q({ kind: 'channels.list', applicationId }),
  },
  {
    name: 'channel snapshot',
    method: 'GET',
    path: C,
    doc: oC,
    ...q({ kind: 'channel.get', applicationId, channelId }),
  },
  {
    name: 'update a channel',
    method: 'PATCH',
    path: C,
    doc: oC,
    body: { ...levelPatch, excludedUserIds: ['u-2'] },
    badBody: {
      body: { recording: 'yes', excludedUserIds: 'u-2', colour: 'red' },
      fields: ['recording', 'excludedUserIds', 'colour'],
    },
    command: {
      kind: 'update',
      origin: 'api',
      target: { level: 'channel', applicationId, channelId, patch: { ...levelPatch, excludedUserIds: ['u-2'] } },
    },
  },
  {
    name: 'kick everyone out of a channel',
    method: 'DELETE',
    path: C,
    doc: oC,
    ...kick({ level: 'channel', applicationId, channelId }),
  },
  {
    name: 'message to a channel',
    method: 'POST',
    path: `${C}/message`,
    doc: `${oC}/message`,
    ...message({ level: 'channel', applicationId, channelId }),
  },
  {
    name: 'channels of a client',
    method: 'GET',
    path: `${A}/${UDC}/channels`,
    doc: `${oA}/${oUDC}/channels`,
    ...q({ kind: 'client.channels', applicationId, userId, deviceId, clientId }),
  },
  // Users
  {
    name: 'users of an application',
    method: 'GET',
    path: `${A}/users`,
    doc: `${oA}/users`,
    ...q({ kind: 'users.list', applicationId }),
  },
  {
    name: 'user info',
    method: 'GET',
    path: `${A}/users/${userId}`,
    doc: `${oA}/users/{userId}`,
    ...q({ kind: 'user.get', applicationId, userId }),
  },
  {
    name: 'message to a user',
    method: 'POST',
    path: `${A}/users/${userId}/message`,
    doc: `${oA}/users/{userId}/message`,
    ...message({ level: 'user', applicationId, userId }),
  },
  {
    name: 'users in a channel',
    method: 'GET',
    path: `${C}/users`,
    doc: `${oC}/users`,
    ...q({ kind: 'channel.users', applicationId, channelId }),
  },
  {
    name: 'user in a channel',
    method: 'GET',
    path: `${C}/users/${userId}`,
    doc: `${oC}/users/{userId}`,
    ...q({ kind: 'channel.user.get', applicationId, channelId, userId }),
  },
  {
    name: 'update a user in a channel',
    method: 'PATCH',
    path: `${C}/users/${userId}`,
    doc: `${oC}/users/{userId}`,
    body: levelPatch,
    badBody: { body: { recording: 'yes', excludedUserIds: ['x'] }, fields: ['recording', 'excludedUserIds'] },
    command: {
      kind: 'update',
      origin: 'api',
      target: { level: 'channel.user', applicationId, channelId, userId, patch: levelPatch },
    },
  },
  {
    name: 'kick a user',
    method: 'DELETE',
    path: `${C}/users/${userId}`,
    doc: `${oC}/users/{userId}`,
    ...kick({ level: 'channel.user', applicationId, channelId, userId }),
  },
  {
    name: 'message to a user in a channel',
    method: 'POST',
    path: `${C}/users/${userId}/message`,
    doc: `${oC}/users/{userId}/message`,
    ...message({ level: 'channel.user', applicationId, channelId, userId }),
  },
  // Devices
  {
    name: 'devices of a user',
    method: 'GET',
    path: `${A}/users/${userId}/devices`,
    doc: `${oA}/users/{userId}/devices`,
    ...q({ kind: 'user.devices', applicationId, userId }),
  },
  {
    name: 'device info',
    method: 'GET',
    path: `${A}/users/${userId}/devices/${deviceId}`,
    doc: `${oA}/users/{userId}/devices/{deviceId}`,
    ...q({ kind: 'device.get', applicationId, userId, deviceId }),
  },
  {
    name: 'message to a device',
    method: 'POST',
    path: `${A}/users/${userId}/devices/${deviceId}/message`,
    doc: `${oA}/users/{userId}/devices/{deviceId}/message`,
    ...message({ level: 'device', applicationId, userId, deviceId }),
  },
  {
    name: 'devices in a channel',
    method: 'GET',
    path: `${C}/devices`,
    doc: `${oC}/devices`,
    ...q({ kind: 'channel.devices', applicationId, channelId }),
  },
  {
    name: 'devices of a user in a channel',
    method: 'GET',
    path: `${C}/users/${userId}/devices`,
    doc: `${oC}/users/{userId}/devices`,
    ...q({ kind: 'channel.user.devices', applicationId, channelId, userId }),
  },
  {
    name: 'device in a channel',
    method: 'GET',
    path: `${C}/users/${userId}/devices/${deviceId}`,
    doc: `${oC}/users/{userId}/devices/{deviceId}`,
    ...q({ kind: 'channel.device.get', applicationId, channelId, userId, deviceId }),
  },
  {
    name: 'update a device in a channel',
    method: 'PATCH',
    path: `${C}/users/${userId}/devices/${deviceId}`,
    doc: `${oC}/users/{userId}/devices/{deviceId}`,
    body: { audioMuted: false, excludedClientIds: ['cl-9'] },
    badBody: { body: { audioMuted: 1, excludedDeviceIds: [] }, fields: ['audioMuted', 'excludedDeviceIds'] },
    command: {
      kind: 'update',
      origin: 'api',
      target: {
        level: 'channel.device',
        applicationId,
        channelId,
        userId,
        deviceId,
        patch: { audioMuted: false, excludedClientIds: ['cl-9'] },
      },
    },
  },
  {
    name: 'kick a device',
    method: 'DELETE',
    path: `${C}/users/${userId}/devices/${deviceId}`,
    doc: `${oC}/users/{userId}/devices/{deviceId}`,
    ...kick({ level: 'channel.device', applicationId, channelId, userId, deviceId }),
  },
  {
    name: 'message to a device in a channel',
    method: 'POST',
    path: `${C}/users/${userId}/devices/${deviceId}/message`,
    doc: `${oC}/users/{userId}/devices/{deviceId}/message`,
    ...message({ level: 'channel.device', applicationId, channelId, userId, deviceId }),
  },
  // Clients
  {
    name: 'clients of a device',
    method: 'GET',
    path: `${A}/users/${userId}/devices/${deviceId}/clients`,
    doc: `${oA}/users/{userId}/devices/{deviceId}/clients`,
    ...q({ kind: 'device.clients', applicationId, userId, deviceId }),
  },
  {
    name: 'client info',
    method: 'GET',
    path: `${A}/${UDC}`,
    doc: `${oA}/${oUDC}`,
    ...q({ kind: 'client.get', applicationId, userId, deviceId, clientId }),
  },
  {
    name: 'update a client',
    method: 'PATCH',
    path: `${A}/${UDC}`,
    doc: `${oA}/${oUDC}`,
    body: { userAlias: 'Ann', roles: ['host'] },
    badBody: { body: { roles: 'host', recording: true }, fields: ['roles', 'recording'] },
    command: {
      kind: 'update',
      origin: 'api',
      target: {
        level: 'client',
        applicationId,
        userId,
        deviceId,
        clientId,
        patch: { userAlias: 'Ann', roles: ['host'] },
      },
    },
  },
  {
    name: 'message to a client',
    method: 'POST',
    path: `${A}/${UDC}/message`,
    doc: `${oA}/${oUDC}/message`,
    ...message({ level: 'client', applicationId, userId, deviceId, clientId }),
  },
  {
    name: 'clients in a channel',
    method: 'GET',
    path: `${C}/clients`,
    doc: `${oC}/clients`,
    ...q({ kind: 'channel.clients', applicationId, channelId }),
  },
  {
    name: 'clients of a device in a channel',
    method: 'GET',
    path: `${C}/users/${userId}/devices/${deviceId}/clients`,
    doc: `${oC}/users/{userId}/devices/{deviceId}/clients`,
    ...q({ kind: 'channel.device.clients', applicationId, channelId, userId, deviceId }),
  },
  {
    name: 'client in a channel',
    method: 'GET',
    path: `${C}/${UDC}`,
    doc: `${oC}/${oUDC}`,
    ...q({ kind: 'channel.client.get', applicationId, channelId, userId, deviceId, clientId }),
  },
  {
    name: 'update a client in a channel',
    method: 'PATCH',
    path: `${C}/${UDC}`,
    doc: `${oC}/${oUDC}`,
    body: { claim: { id: channelId, disableSendMessage: true }, videoMuted: true, excludedConnectionIds: ['cn-2'] },
    badBody: {
      body: { claim: { id: channelId, canFly: true }, videoMuted: 'no' },
      fields: ['claim.canFly', 'videoMuted'],
    },
    command: {
      kind: 'update',
      origin: 'api',
      target: {
        level: 'channel.client',
        applicationId,
        channelId,
        userId,
        deviceId,
        clientId,
        patch: {
          claim: { id: channelId, disableSendMessage: true },
          videoMuted: true,
          excludedConnectionIds: ['cn-2'],
        },
      },
    },
  },
  {
    name: 'kick a client',
    method: 'DELETE',
    path: `${C}/${UDC}`,
    doc: `${oC}/${oUDC}`,
    ...kick({ level: 'channel.client', applicationId, channelId, userId, deviceId, clientId }),
  },
  {
    name: 'message to a client in a channel',
    method: 'POST',
    path: `${C}/${UDC}/message`,
    doc: `${oC}/${oUDC}/message`,
    ...message({ level: 'channel.client', applicationId, channelId, userId, deviceId, clientId }),
  },
  // Connections
  {
    name: 'connections in a channel',
    method: 'GET',
    path: `${C}/connections`,
    doc: `${oC}/connections`,
    ...q({ kind: 'channel.connections', applicationId, channelId }),
  },
  {
    name: 'connections of a client in a channel',
    method: 'GET',
    path: `${C}/${UDC}/connections`,
    doc: `${oC}/${oUDC}/connections`,
    ...q({ kind: 'channel.client.connections', applicationId, channelId, userId, deviceId, clientId }),
  },
  {
    name: 'connection info',
    method: 'GET',
    path: `${C}/${UDC}/connections/${connectionId}`,
    doc: `${oC}/${oUDC}/connections/{connectionId}`,
    ...q({ kind: 'connection.get', applicationId, channelId, userId, deviceId, clientId, connectionId }),
  },
  {
    name: 'update a connection',
    method: 'PATCH',
    path: `${C}/${UDC}/connections/${connectionId}`,
    doc: `${oC}/${oUDC}/connections/{connectionId}`,
    body: levelPatch,
    badBody: badLevelPatch,
    command: {
      kind: 'update',
      origin: 'api',
      target: {
        level: 'connection',
        applicationId,
        channelId,
        userId,
        deviceId,
        clientId,
        connectionId,
        patch: levelPatch,
      },
    },
  },
  {
    name: 'kick a connection',
    method: 'DELETE',
    path: `${C}/${UDC}/connections/${connectionId}`,
    doc: `${oC}/${oUDC}/connections/{connectionId}`,
    ...kick({ level: 'connection', applicationId, channelId, userId, deviceId, clientId, connectionId }),
  },
  // Media servers, connectors, diagnostics (operator)
  {
    name: 'media servers',
    method: 'GET',
    path: '/mediaservers',
    doc: '/mediaservers',
    operator: true,
    ...q({ kind: 'mediaservers.list' } as RuntimeQuery),
  },
  {
    name: 'statistics of all media servers',
    method: 'GET',
    path: '/mediaservers/stats',
    doc: '/mediaservers/stats',
    operator: true,
    ...q({ kind: 'mediaservers.stats' } as RuntimeQuery),
  },
  {
    name: 'a media server',
    method: 'GET',
    path: `/mediaservers/${mediaServerId}`,
    doc: '/mediaservers/{mediaServerId}',
    operator: true,
    ...q({ kind: 'mediaserver.get', mediaServerId }),
  },
  {
    name: 'disable a media server',
    method: 'PATCH',
    path: `/mediaservers/${mediaServerId}`,
    doc: '/mediaservers/{mediaServerId}',
    operator: true,
    body: { active: false },
    badBody: { body: { active: 'no', region: 'eu' }, fields: ['active', 'region'] },
    command: { kind: 'mediaserver.update', mediaServerId, patch: { active: false } },
  },
  {
    name: 'statistics of a media server',
    method: 'GET',
    path: `/mediaservers/${mediaServerId}/stats`,
    doc: '/mediaservers/{mediaServerId}/stats',
    operator: true,
    ...q({ kind: 'mediaserver.stats', mediaServerId }),
  },
  {
    name: 'connectors',
    method: 'GET',
    path: '/connectors',
    doc: '/connectors',
    operator: true,
    ...q({ kind: 'connectors.list' } as RuntimeQuery),
  },
  {
    name: 'sip connectors',
    method: 'GET',
    path: '/sipconnectors',
    doc: '/sipconnectors',
    operator: true,
    ...q({ kind: 'connectors.list' } as RuntimeQuery),
  },
  {
    name: 'datastore dump',
    method: 'GET',
    path: '/diagnostics/datastore',
    doc: '/diagnostics/datastore',
    operator: true,
    ...q({ kind: 'diagnostics.datastore', count: 100 }),
  },
];
