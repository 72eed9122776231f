/**
 * Every interface A runtime route of http-contract.md that admin-gateway serves (the recording
 * routes belong to recording-service), with what it must ask runtime-registry.
 */
import type { RuntimeQuery } from '@switchboard/contracts';
import {
  applicationId,
  channelId,
  clientId,
  deviceId,
  docApplicationPath,
  docChannelPath,
  docClientSubpath,
  kick,
  levelPatch,
  message,
  userId,
  asks,
  at,
  update,
  type RouteCase,
} from './route-cases.testing.js';
import { CLIENT_AND_OPERATOR_ROUTES } from './route-table-clients.testing.js';

export { IDS, MESSAGE, type RouteCase } from './route-cases.testing.js';

export const ROUTES: RouteCase[] = [
  // Applications
  {
    name: 'list application ids',
    method: 'GET',
    ...at('/applications'),
    ...asks({ kind: 'applications.list' } as RuntimeQuery),
  },
  {
    name: 'application snapshot',
    method: 'GET',
    ...at(docApplicationPath),
    ...asks({ kind: 'application.get', applicationId }),
  },
  {
    name: 'message to an application',
    method: 'POST',
    ...at(`${docApplicationPath}/message`),
    ...message({ level: 'application', applicationId }),
  },
  {
    name: 'application environment',
    method: 'GET',
    ...at(`${docApplicationPath}/environment`),
    ...asks({ kind: 'application.environment', applicationId }),
  },
  // Channels
  {
    name: 'active channels',
    method: 'GET',
    ...at(`${docApplicationPath}/channels`),
    ...asks({ kind: 'channels.list', applicationId }),
  },
  {
    name: 'channel snapshot',
    method: 'GET',
    ...at(docChannelPath),
    ...asks({ kind: 'channel.get', applicationId, channelId }),
  },
  {
    name: 'update a channel',
    method: 'PATCH',
    ...at(docChannelPath),
    body: { ...levelPatch, excludedUserIds: ['u-2'] },
    badBody: {
      body: { recording: 'yes', excludedUserIds: 'u-2', colour: 'red' },
      fields: ['recording', 'excludedUserIds', 'colour'],
    },
    ...update({ level: 'channel', applicationId, channelId, patch: { ...levelPatch, excludedUserIds: ['u-2'] } }),
  },
  {
    name: 'kick everyone out of a channel',
    method: 'DELETE',
    ...at(docChannelPath),
    ...kick({ level: 'channel', applicationId, channelId }),
  },
  {
    name: 'message to a channel',
    method: 'POST',
    ...at(`${docChannelPath}/message`),
    ...message({ level: 'channel', applicationId, channelId }),
  },
  {
    name: 'channels of a client',
    method: 'GET',
    ...at(`${docApplicationPath}/${docClientSubpath}/channels`),
    ...asks({ kind: 'client.channels', applicationId, userId, deviceId, clientId }),
  },
  // Users
  {
    name: 'users of an application',
    method: 'GET',
    ...at(`${docApplicationPath}/users`),
    ...asks({ kind: 'users.list', applicationId }),
  },
  {
    name: 'user info',
    method: 'GET',
    ...at(`${docApplicationPath}/users/{userId}`),
    ...asks({ kind: 'user.get', applicationId, userId }),
  },
  {
    name: 'message to a user',
    method: 'POST',
    ...at(`${docApplicationPath}/users/{userId}/message`),
    ...message({ level: 'user', applicationId, userId }),
  },
  {
    name: 'users in a channel',
    method: 'GET',
    ...at(`${docChannelPath}/users`),
    ...asks({ kind: 'channel.users', applicationId, channelId }),
  },
  {
    name: 'user in a channel',
    method: 'GET',
    ...at(`${docChannelPath}/users/{userId}`),
    ...asks({ kind: 'channel.user.get', applicationId, channelId, userId }),
  },
  {
    name: 'update a user in a channel',
    method: 'PATCH',
    ...at(`${docChannelPath}/users/{userId}`),
    body: levelPatch,
    badBody: { body: { recording: 'yes', excludedUserIds: ['x'] }, fields: ['recording', 'excludedUserIds'] },
    ...update({ level: 'channel.user', applicationId, channelId, userId, patch: levelPatch }),
  },
  {
    name: 'kick a user',
    method: 'DELETE',
    ...at(`${docChannelPath}/users/{userId}`),
    ...kick({ level: 'channel.user', applicationId, channelId, userId }),
  },
  {
    name: 'message to a user in a channel',
    method: 'POST',
    ...at(`${docChannelPath}/users/{userId}/message`),
    ...message({ level: 'channel.user', applicationId, channelId, userId }),
  },
  // Devices
  {
    name: 'devices of a user',
    method: 'GET',
    ...at(`${docApplicationPath}/users/{userId}/devices`),
    ...asks({ kind: 'user.devices', applicationId, userId }),
  },
  {
    name: 'device info',
    method: 'GET',
    ...at(`${docApplicationPath}/users/{userId}/devices/{deviceId}`),
    ...asks({ kind: 'device.get', applicationId, userId, deviceId }),
  },
  {
    name: 'message to a device',
    method: 'POST',
    ...at(`${docApplicationPath}/users/{userId}/devices/{deviceId}/message`),
    ...message({ level: 'device', applicationId, userId, deviceId }),
  },
  {
    name: 'devices in a channel',
    method: 'GET',
    ...at(`${docChannelPath}/devices`),
    ...asks({ kind: 'channel.devices', applicationId, channelId }),
  },
  {
    name: 'devices of a user in a channel',
    method: 'GET',
    ...at(`${docChannelPath}/users/{userId}/devices`),
    ...asks({ kind: 'channel.user.devices', applicationId, channelId, userId }),
  },
  {
    name: 'device in a channel',
    method: 'GET',
    ...at(`${docChannelPath}/users/{userId}/devices/{deviceId}`),
    ...asks({ kind: 'channel.device.get', applicationId, channelId, userId, deviceId }),
  },
  {
    name: 'update a device in a channel',
    method: 'PATCH',
    ...at(`${docChannelPath}/users/{userId}/devices/{deviceId}`),
    body: { audioMuted: false, excludedClientIds: ['cl-9'] },
    badBody: { body: { audioMuted: 1, excludedDeviceIds: [] }, fields: ['audioMuted', 'excludedDeviceIds'] },
    ...update({
      level: 'channel.device',
      applicationId,
      channelId,
      userId,
      deviceId,
      patch: { audioMuted: false, excludedClientIds: ['cl-9'] },
    }),
  },
  {
    name: 'kick a device',
    method: 'DELETE',
    ...at(`${docChannelPath}/users/{userId}/devices/{deviceId}`),
    ...kick({ level: 'channel.device', applicationId, channelId, userId, deviceId }),
  },
  {
    name: 'message to a device in a channel',
    method: 'POST',
    ...at(`${docChannelPath}/users/{userId}/devices/{deviceId}/message`),
    ...message({ level: 'channel.device', applicationId, channelId, userId, deviceId }),
  },
  ...CLIENT_AND_OPERATOR_ROUTES,
];
