/**
 * Action payloads of interface B (service-spec.md 4.B; http-contract.md: POST
 * `/ApplicationConfigs/{id}/<Action>`). `ActionPayloads` maps each action name to its payload schema.
 *
 * Decision: the spec types every id of these payloads `string|null`; the fields that say what the
 * action targets are nonetheless required (present, possibly null), so a forgotten field is reported
 * by name. `message` is a server message object, `config` the level config of the target.
 */
import type { Static, TProperties } from '@sinclair/typebox';
import { Nullable, ShortText, record } from '../interface-a/record-schema.js';
import {
  ChannelClientConfig,
  ChannelConfigUpdate,
  ChannelDeviceConfig,
  ChannelUserConfig,
  ClaimsPayload,
  ConnectionConfig,
  ServerMessage,
} from './level-configs.js';

const channelId = Nullable(ShortText(), { description: 'Target channel id.' });
const userId = Nullable(ShortText(), { description: 'Target user id.' });
const deviceId = Nullable(ShortText(), { description: 'Target device id.' });
const clientId = Nullable(ShortText(), { description: 'Target client id.' });
const connectionId = Nullable(ShortText(), { description: 'Target connection id.' });
const message = ServerMessage;

const payload = <P extends TProperties>(action: string, props: P, description: string) =>
  record(`${action}Payload`, props, description);

/** The Token action takes the claims payload and answers `{ "value": "<client token>" }`. */
export const TokenRequest = ClaimsPayload;
export type TokenRequest = ClaimsPayload;

export const SendMessagePayload = payload('SendMessage', { message }, 'Send a server message to the application.');
export type SendMessagePayload = Static<typeof SendMessagePayload>;
export const SendUserMessagePayload = payload(
  'SendUserMessage',
  { message, userId },
  'Send a server message to a user.',
);
export type SendUserMessagePayload = Static<typeof SendUserMessagePayload>;
export const SendDeviceMessagePayload = payload(
  'SendDeviceMessage',
  { message, userId, deviceId },
  'Send a server message to a device.',
);
export type SendDeviceMessagePayload = Static<typeof SendDeviceMessagePayload>;
export const SendClientMessagePayload = payload(
  'SendClientMessage',
  { message, userId, deviceId, clientId },
  'Send a server message to a client.',
);
export type SendClientMessagePayload = Static<typeof SendClientMessagePayload>;
export const SendChannelMessagePayload = payload(
  'SendChannelMessage',
  { channelId, message },
  'Send a server message to a channel.',
);
export type SendChannelMessagePayload = Static<typeof SendChannelMessagePayload>;
export const SendChannelUserMessagePayload = payload(
  'SendChannelUserMessage',
  { channelId, userId, message },
  'Send a server message to a user in a channel.',
);
export type SendChannelUserMessagePayload = Static<typeof SendChannelUserMessagePayload>;
export const SendChannelDeviceMessagePayload = payload(
  'SendChannelDeviceMessage',
  { channelId, userId, deviceId, message },
  'Send a server message to a device in a channel.',
);
export type SendChannelDeviceMessagePayload = Static<typeof SendChannelDeviceMessagePayload>;
export const SendChannelClientMessagePayload = payload(
  'SendChannelClientMessage',
  { channelId, userId, deviceId, clientId, message },
  'Send a server message to a client in a channel.',
);
export type SendChannelClientMessagePayload = Static<typeof SendChannelClientMessagePayload>;

export const KickChannelPayload = payload('KickChannel', { channelId }, 'Kick everyone out of a channel.');
export type KickChannelPayload = Static<typeof KickChannelPayload>;
export const KickUserPayload = payload('KickUser', { channelId, userId }, 'Kick a user out of a channel.');
export type KickUserPayload = Static<typeof KickUserPayload>;
export const KickDevicePayload = payload(
  'KickDevice',
  { channelId, userId, deviceId },
  'Kick a device out of a channel.',
);
export type KickDevicePayload = Static<typeof KickDevicePayload>;
export const KickClientPayload = payload(
  'KickClient',
  { channelId, userId, deviceId, clientId },
  'Kick a client out of a channel.',
);
export type KickClientPayload = Static<typeof KickClientPayload>;
export const KickConnectionPayload = payload(
  'KickConnection',
  { channelId, userId, deviceId, clientId, connectionId },
  'Kick a connection out of a channel.',
);
export type KickConnectionPayload = Static<typeof KickConnectionPayload>;

export const UpdateChannelPayload = payload(
  'UpdateChannel',
  { channelId, config: ChannelConfigUpdate },
  'Update the settings of a channel.',
);
export type UpdateChannelPayload = Static<typeof UpdateChannelPayload>;
export const UpdateUserPayload = payload(
  'UpdateUser',
  { channelId, userId, config: ChannelUserConfig },
  'Update the settings of a user in a channel.',
);
export type UpdateUserPayload = Static<typeof UpdateUserPayload>;
export const UpdateDevicePayload = payload(
  'UpdateDevice',
  { channelId, userId, deviceId, config: ChannelDeviceConfig },
  'Update the settings of a device in a channel.',
);
export type UpdateDevicePayload = Static<typeof UpdateDevicePayload>;
export const UpdateClientPayload = payload(
  'UpdateClient',
  { channelId, userId, deviceId, clientId, config: ChannelClientConfig },
  'Update the settings of a client in a channel.',
);
export type UpdateClientPayload = Static<typeof UpdateClientPayload>;
export const UpdateConnectionPayload = payload(
  'UpdateConnection',
  { channelId, userId, deviceId, clientId, connectionId, config: ConnectionConfig },
  'Update the settings of a connection.',
);
export type UpdateConnectionPayload = Static<typeof UpdateConnectionPayload>;

/** Action name (the last path segment of `POST /ApplicationConfigs/{id}/<Action>`) to payload schema. */
export const ActionPayloads = {
  Token: ClaimsPayload,
  SendMessage: SendMessagePayload,
  SendUserMessage: SendUserMessagePayload,
  SendDeviceMessage: SendDeviceMessagePayload,
  SendClientMessage: SendClientMessagePayload,
  SendChannelMessage: SendChannelMessagePayload,
  SendChannelUserMessage: SendChannelUserMessagePayload,
  SendChannelDeviceMessage: SendChannelDeviceMessagePayload,
  SendChannelClientMessage: SendChannelClientMessagePayload,
  KickChannel: KickChannelPayload,
  KickUser: KickUserPayload,
  KickDevice: KickDevicePayload,
  KickClient: KickClientPayload,
  KickConnection: KickConnectionPayload,
  UpdateChannel: UpdateChannelPayload,
  UpdateUser: UpdateUserPayload,
  UpdateDevice: UpdateDevicePayload,
  UpdateClient: UpdateClientPayload,
  UpdateConnection: UpdateConnectionPayload,
} as const;

export type ActionName = keyof typeof ActionPayloads;
export type ActionPayload<A extends ActionName> = Static<(typeof ActionPayloads)[A]>;
export const ACTION_NAMES = Object.freeze(Object.keys(ActionPayloads)) as readonly ActionName[];

export function isActionName(value: unknown): value is ActionName {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ActionPayloads, value);
}
