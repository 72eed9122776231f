/** The ids, paths and helpers the interface A route tables (route-table*.testing.ts) are written with. */
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

export const { applicationId, channelId, userId, deviceId, clientId, connectionId, mediaServerId } = IDS;
/** Paths in their OpenAPI spelling (`at` fills in the ids). */
export const docApplicationPath = '/applications/{applicationId}';
export const docChannelPath = `${docApplicationPath}/channels/{channelId}`;
export const docClientSubpath = 'users/{userId}/devices/{deviceId}/clients/{clientId}';

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
/** `doc` and `path` of a route from its OpenAPI spelling: each `{name}` stands for that id of IDS. */
export const at = (doc: string) => ({
  path: doc.replace(/\{(\w+)\}/g, (_, name: string) => IDS[name as keyof typeof IDS]),
  doc,
});
export const asks = (query: RuntimeQuery) => ({ query });
export const message = (target: Extract<RuntimeCommand, { kind: 'message' }>['target']) => ({
  body: MESSAGE,
  badBody: { body: { message: 5, sender: 'x' }, fields: ['message', 'sender'] },
  command: { kind: 'message', origin: 'api', target, message: MESSAGE } as RuntimeCommand,
});
export const update = (target: Extract<RuntimeCommand, { kind: 'update' }>['target']) => ({
  command: { kind: 'update', origin: 'api', target } as RuntimeCommand,
});
export const kick = (target: Extract<RuntimeCommand, { kind: 'kick' }>['target']) => ({
  command: { kind: 'kick', origin: 'api', target } as RuntimeCommand,
});
export const levelPatch = {
  recording: true,
  recordingTag: 'r',
  audioMuted: true,
  videoMuted: null,
  audioUnmuteDisabled: true,
};
export const badLevelPatch = { body: { recording: 'yes', colour: 'red' }, fields: ['recording', 'colour'] };
