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
const applicationPath = `/applications/${applicationId}`;
const channelPath = `${applicationPath}/channels/${channelId}`;
const clientSubpath = `users/${userId}/devices/${deviceId}/clients/${clientId}`;
/** OpenAPI spellings of the same paths. */
const docApplicationPath = '/applications/{applicationId}';
const docChannelPath = `${docApplicationPath}/channels/{channelId}`;
const docClientSubpath = 'users/{userId}/devices/{deviceId}/clients/{clientId}';

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
const asks = (query: RuntimeQuery) => ({ query });
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
    ...asks({ kind: 'applications.list' } as RuntimeQuery),
  },
  {
    name: 'application snapshot',
    method: 'GET',
    path: applicationPath,
    doc: docApplicationPath,
    ...asks({ kind: 'application.get', applicationId }),
  },
  {
    name: 'message to an application',
    method: 'POST',
    path: `${applicationPath}/message`,
    doc: `${docApplicationPath}/message`,
    ...message({ level: 'application', applicationId }),
  },
  {
    name: 'application environment',
    method: 'GET',
    path: `${applicationPath}/environment`,
    doc: `${docApplicationPath}/environment`,
    ...asks({ kind: 'application.environment', applicationId }),
  },
  // Channels
  {
    name: 'active channels',
    method: 'GET',
    path: `${applicationPath}/channels`,
    doc: `${docApplicationPath}/channels`,
    ...asks({ kind: 'channels.list', applicationId }),
  },
  {
    name: 'channel snapshot',
    method: 'GET',
    path: channelPath,
    doc: docChannelPath,
    ...asks({ kind: 'channel.get', applicationId, channelId }),
  },
  {
    name: 'update a channel',
    method: 'PATCH',
    path: channelPath,
    doc: docChannelPath,
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
    path: channelPath,
    doc: docChannelPath,
    ...kick({ level: 'channel', applicationId, channelId }),
  },
  {
    name: 'message to a channel',
    method: 'POST',
    path: `${channelPath}/message`,
    doc: `${docChannelPath}/message`,
    ...message({ level: 'channel', applicationId, channelId }),
  },
  {
    name: 'channels of a client',
    method: 'GET',
    path: `${applicationPath}/${clientSubpath}/channels`,
    doc: `${docApplicationPath}/${docClientSubpath}/channels`,
    ...asks({ kind: 'client.channels', applicationId, userId, deviceId, clientId }),
  },
  // Users
  {
    name: 'users of an application',
    method: 'GET',
    path: `${applicationPath}/users`,
    doc: `${docApplicationPath}/users`,
    ...asks({ kind: 'users.list', applicationId }),
  },
  {
    name: 'user info',
    method: 'GET',
    path: `${applicationPath}/users/${userId}`,
    doc: `${docApplicationPath}/users/{userId}`,
    ...asks({ kind: 'user.get', applicationId, userId }),
  },
  {
    name: 'message to a user',
    method: 'POST',
    path: `${applicationPath}/users/${userId}/message`,
    doc: `${docApplicationPath}/users/{userId}/message`,
    ...message({ level: 'user', applicationId, userId }),
  },
  {
    name: 'users in a channel',
    method: 'GET',
    path: `${channelPath}/users`,
    doc: `${docChannelPath}/users`,
    ...asks({ kind: 'channel.users', applicationId, channelId }),
  },
  {
    name: 'user in a channel',
    method: 'GET',
    path: `${channelPath}/users/${userId}`,
    doc: `${docChannelPath}/users/{userId}`,
    ...asks({ kind: 'channel.user.get', applicationId, channelId, userId }),
  },
  {
    name: 'update a user in a channel',
    method: 'PATCH',
    path: `${channelPath}/users/${userId}`,
    doc: `${docChannelPath}/users/{userId}`,
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
    path: `${channelPath}/users/${userId}`,
    doc: `${docChannelPath}/users/{userId}`,
    ...kick({ level: 'channel.user', applicationId, channelId, userId }),
  },
  {
    name: 'message to a user in a channel',
    method: 'POST',
    path: `${channelPath}/users/${userId}/message`,
    doc: `${docChannelPath}/users/{userId}/message`,
    ...message({ level: 'channel.user', applicationId, channelId, userId }),
  },
  // Devices
  {
    name: 'devices of a user',
    method: 'GET',
    path: `${applicationPath}/users/${userId}/devices`,
    doc: `${docApplicationPath}/users/{userId}/devices`,
    ...asks({ kind: 'user.devices', applicationId, userId }),
  },
  {
    name: 'device info',
    method: 'GET',
    path: `${applicationPath}/users/${userId}/devices/${deviceId}`,
    doc: `${docApplicationPath}/users/{userId}/devices/{deviceId}`,
    ...asks({ kind: 'device.get', applicationId, userId, deviceId }),
  },
  {
    name: 'message to a device',
    method: 'POST',
    path: `${applicationPath}/users/${userId}/devices/${deviceId}/message`,
    doc: `${docApplicationPath}/users/{userId}/devices/{deviceId}/message`,
    ...message({ level: 'device', applicationId, userId, deviceId }),
  },
  {
    name: 'devices in a channel',
    method: 'GET',
    path: `${channelPath}/devices`,
    doc: `${docChannelPath}/devices`,
    ...asks({ kind: 'channel.devices', applicationId, channelId }),
  },
  {
    name: 'devices of a user in a channel',
    method: 'GET',
    path: `${channelPath}/users/${userId}/devices`,
    doc: `${docChannelPath}/users/{userId}/devices`,
    ...asks({ kind: 'channel.user.devices', applicationId, channelId, userId }),
  },
  {
    name: 'device in a channel',
    method: 'GET',
    path: `${channelPath}/users/${userId}/devices/${deviceId}`,
    doc: `${docChannelPath}/users/{userId}/devices/{deviceId}`,
    ...asks({ kind: 'channel.device.get', applicationId, channelId, userId, deviceId }),
  },
  {
    name: 'update a device in a channel',
    method: 'PATCH',
    path: `${channelPath}/users/${userId}/devices/${deviceId}`,
    doc: `${docChannelPath}/users/{userId}/devices/{deviceId}`,
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
    path: `${channelPath}/users/${userId}/devices/${deviceId}`,
    doc: `${docChannelPath}/users/{userId}/devices/{deviceId}`,
    ...kick({ level: 'channel.device', applicationId, channelId, userId, deviceId }),
  },
  {
    name: 'message to a device in a channel',
    method: 'POST',
    path: `${channelPath}/users/${userId}/devices/${deviceId}/message`,
    doc: `${docChannelPath}/users/{userId}/devices/{deviceId}/message`,
    ...message({ level: 'channel.device', applicationId, channelId, userId, deviceId }),
  },
  // Clients
  {
    name: 'clients of a device',
    method: 'GET',
    path: `${applicationPath}/users/${userId}/devices/${deviceId}/clients`,
    doc: `${docApplicationPath}/users/{userId}/devices/{deviceId}/clients`,
    ...asks({ kind: 'device.clients', applicationId, userId, deviceId }),
  },
  {
    name: 'client info',
    method: 'GET',
    path: `${applicationPath}/${clientSubpath}`,
    doc: `${docApplicationPath}/${docClientSubpath}`,
    ...asks({ kind: 'client.get', applicationId, userId, deviceId, clientId }),
  },
  {
    name: 'update a client',
    method: 'PATCH',
    path: `${applicationPath}/${clientSubpath}`,
    doc: `${docApplicationPath}/${docClientSubpath}`,
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
    path: `${applicationPath}/${clientSubpath}/message`,
    doc: `${docApplicationPath}/${docClientSubpath}/message`,
    ...message({ level: 'client', applicationId, userId, deviceId, clientId }),
  },
  {
    name: 'clients in a channel',
    method: 'GET',
    path: `${channelPath}/clients`,
    doc: `${docChannelPath}/clients`,
    ...asks({ kind: 'channel.clients', applicationId, channelId }),
  },
  {
    name: 'clients of a device in a channel',
    method: 'GET',
    path: `${channelPath}/users/${userId}/devices/${deviceId}/clients`,
    doc: `${docChannelPath}/users/{userId}/devices/{deviceId}/clients`,
    ...asks({ kind: 'channel.device.clients', applicationId, channelId, userId, deviceId }),
  },
  {
    name: 'client in a channel',
    method: 'GET',
    path: `${channelPath}/${clientSubpath}`,
    doc: `${docChannelPath}/${docClientSubpath}`,
    ...asks({ kind: 'channel.client.get', applicationId, channelId, userId, deviceId, clientId }),
  },
  {
    name: 'update a client in a channel',
    method: 'PATCH',
    path: `${channelPath}/${clientSubpath}`,
    doc: `${docChannelPath}/${docClientSubpath}`,
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
    path: `${channelPath}/${clientSubpath}`,
    doc: `${docChannelPath}/${docClientSubpath}`,
    ...kick({ level: 'channel.client', applicationId, channelId, userId, deviceId, clientId }),
  },
  {
    name: 'message to a client in a channel',
    method: 'POST',
    path: `${channelPath}/${clientSubpath}/message`,
    doc: `${docChannelPath}/${docClientSubpath}/message`,
    ...message({ level: 'channel.client', applicationId, channelId, userId, deviceId, clientId }),
  },
  // Connections
  {
    name: 'connections in a channel',
    method: 'GET',
    path: `${channelPath}/connections`,
    doc: `${docChannelPath}/connections`,
    ...asks({ kind: 'channel.connections', applicationId, channelId }),
  },
  {
    name: 'connections of a client in a channel',
    method: 'GET',
    path: `${channelPath}/${clientSubpath}/connections`,
    doc: `${docChannelPath}/${docClientSubpath}/connections`,
    ...asks({ kind: 'channel.client.connections', applicationId, channelId, userId, deviceId, clientId }),
  },
  {
    name: 'connection info',
    method: 'GET',
    path: `${channelPath}/${clientSubpath}/connections/${connectionId}`,
    doc: `${docChannelPath}/${docClientSubpath}/connections/{connectionId}`,
    ...asks({ kind: 'connection.get', applicationId, channelId, userId, deviceId, clientId, connectionId }),
  },
  {
    name: 'update a connection',
    method: 'PATCH',
    path: `${channelPath}/${clientSubpath}/connections/${connectionId}`,
    doc: `${docChannelPath}/${docClientSubpath}/connections/{connectionId}`,
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
    path: `${channelPath}/${clientSubpath}/connections/${connectionId}`,
    doc: `${docChannelPath}/${docClientSubpath}/connections/{connectionId}`,
    ...kick({ level: 'connection', applicationId, channelId, userId, deviceId, clientId, connectionId }),
  },
  // Media servers, connectors, diagnostics (operator)
  {
    name: 'media servers',
    method: 'GET',
    path: '/mediaservers',
    doc: '/mediaservers',
    operator: true,
    ...asks({ kind: 'mediaservers.list' } as RuntimeQuery),
  },
  {
    name: 'statistics of all media servers',
    method: 'GET',
    path: '/mediaservers/stats',
    doc: '/mediaservers/stats',
    operator: true,
    ...asks({ kind: 'mediaservers.stats' } as RuntimeQuery),
  },
  {
    name: 'a media server',
    method: 'GET',
    path: `/mediaservers/${mediaServerId}`,
    doc: '/mediaservers/{mediaServerId}',
    operator: true,
    ...asks({ kind: 'mediaserver.get', mediaServerId }),
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
    ...asks({ kind: 'mediaserver.stats', mediaServerId }),
  },
  {
    name: 'connectors',
    method: 'GET',
    path: '/connectors',
    doc: '/connectors',
    operator: true,
    ...asks({ kind: 'connectors.list' } as RuntimeQuery),
  },
  {
    name: 'sip connectors',
    method: 'GET',
    path: '/sipconnectors',
    doc: '/sipconnectors',
    operator: true,
    ...asks({ kind: 'connectors.list' } as RuntimeQuery),
  },
  {
    name: 'datastore dump',
    method: 'GET',
    path: '/diagnostics/datastore',
    doc: '/diagnostics/datastore',
    operator: true,
    ...asks({ kind: 'diagnostics.datastore', count: 100 }),
  },
];
