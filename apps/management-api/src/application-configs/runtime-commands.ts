/**
 * Interface B actions as runtime commands (`runtime-registry.v1.command`): each payload of
 * `ActionPayloads` becomes the message, kick or update of its level. Pure; the ids a level needs
 * must be present (the payload types them `string|null`), a null one is a 400 naming the field.
 */
import {
  DomainError,
  type ActionName,
  type ActionPayload,
  type ChannelClientConfig,
  type KickTarget,
  type MessageBody,
  type MessageTarget,
  type RuntimeCommand,
  type UpdateTarget,
} from '@switchboard/contracts';

export type RuntimeActionName = Exclude<ActionName, 'Token'>;

type Ids = {
  channelId?: string | null;
  userId?: string | null;
  deviceId?: string | null;
  clientId?: string | null;
  connectionId?: string | null;
};

function need<K extends keyof Ids>(payload: Ids, ...fields: K[]): { [P in K]: string } {
  const out = {} as { [P in K]: string };
  const missing = fields.filter((f) => typeof payload[f] !== 'string' || payload[f] === '');
  if (missing.length > 0) {
    throw new DomainError(
      'ValidationFailed',
      `${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} required for this action.`,
      missing.map((field) => ({ field, message: 'is required for this action' })),
    );
  }
  for (const f of fields) out[f] = payload[f] as string;
  return out;
}

/** Drops absent fields; nulls stay (null means "unchanged" at every level). */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function message(target: MessageTarget, body: MessageBody): RuntimeCommand {
  return { kind: 'message', target, message: defined(body), origin: 'api' };
}

function kick(target: KickTarget): RuntimeCommand {
  return { kind: 'kick', target, origin: 'api' };
}

function update(target: UpdateTarget): RuntimeCommand {
  return { kind: 'update', target, origin: 'api' };
}

/** The client config spells the audio unmute flag `audioUmuteDisabled` (wire compatibility); the runtime does not. */
function clientPatch(config: ChannelClientConfig) {
  const { audioUmuteDisabled, ...rest } = config;
  return defined({ ...rest, audioUnmuteDisabled: audioUmuteDisabled });
}

export function toRuntimeCommand<A extends RuntimeActionName>(
  action: A,
  applicationId: string,
  payload: ActionPayload<A>,
): RuntimeCommand {
  const p = payload as ActionPayload<RuntimeActionName> & Ids;
  const app = { applicationId };
  switch (action) {
    case 'SendMessage':
      return message({ level: 'application', ...app }, (p as ActionPayload<'SendMessage'>).message);
    case 'SendUserMessage':
      return message({ level: 'user', ...app, ...need(p, 'userId') }, (p as ActionPayload<'SendUserMessage'>).message);
    case 'SendDeviceMessage':
      return message(
        { level: 'device', ...app, ...need(p, 'userId', 'deviceId') },
        (p as ActionPayload<'SendDeviceMessage'>).message,
      );
    case 'SendClientMessage':
      return message(
        { level: 'client', ...app, ...need(p, 'userId', 'deviceId', 'clientId') },
        (p as ActionPayload<'SendClientMessage'>).message,
      );
    case 'SendChannelMessage':
      return message(
        { level: 'channel', ...app, ...need(p, 'channelId') },
        (p as ActionPayload<'SendChannelMessage'>).message,
      );
    case 'SendChannelUserMessage':
      return message(
        { level: 'channel.user', ...app, ...need(p, 'channelId', 'userId') },
        (p as ActionPayload<'SendChannelUserMessage'>).message,
      );
    case 'SendChannelDeviceMessage':
      return message(
        { level: 'channel.device', ...app, ...need(p, 'channelId', 'userId', 'deviceId') },
        (p as ActionPayload<'SendChannelDeviceMessage'>).message,
      );
    case 'SendChannelClientMessage':
      return message(
        { level: 'channel.client', ...app, ...need(p, 'channelId', 'userId', 'deviceId', 'clientId') },
        (p as ActionPayload<'SendChannelClientMessage'>).message,
      );
    case 'KickChannel':
      return kick({ level: 'channel', ...app, ...need(p, 'channelId') });
    case 'KickUser':
      return kick({ level: 'channel.user', ...app, ...need(p, 'channelId', 'userId') });
    case 'KickDevice':
      return kick({ level: 'channel.device', ...app, ...need(p, 'channelId', 'userId', 'deviceId') });
    case 'KickClient':
      return kick({ level: 'channel.client', ...app, ...need(p, 'channelId', 'userId', 'deviceId', 'clientId') });
    case 'KickConnection':
      return kick({
        level: 'connection',
        ...app,
        ...need(p, 'channelId', 'userId', 'deviceId', 'clientId', 'connectionId'),
      });
    case 'UpdateChannel':
      return update({
        level: 'channel',
        ...app,
        ...need(p, 'channelId'),
        patch: defined((p as ActionPayload<'UpdateChannel'>).config),
      });
    case 'UpdateUser':
      return update({
        level: 'channel.user',
        ...app,
        ...need(p, 'channelId', 'userId'),
        patch: defined((p as ActionPayload<'UpdateUser'>).config),
      });
    case 'UpdateDevice':
      return update({
        level: 'channel.device',
        ...app,
        ...need(p, 'channelId', 'userId', 'deviceId'),
        patch: defined((p as ActionPayload<'UpdateDevice'>).config),
      });
    case 'UpdateClient':
      return update({
        level: 'channel.client',
        ...app,
        ...need(p, 'channelId', 'userId', 'deviceId', 'clientId'),
        patch: clientPatch((p as ActionPayload<'UpdateClient'>).config),
      });
    case 'UpdateConnection':
      return update({
        level: 'connection',
        ...app,
        ...need(p, 'channelId', 'userId', 'deviceId', 'clientId', 'connectionId'),
        patch: defined((p as ActionPayload<'UpdateConnection'>).config),
      });
    default: {
      const never: never = action as never;
      throw new Error(`unknown action ${String(never)}`);
    }
  }
}
