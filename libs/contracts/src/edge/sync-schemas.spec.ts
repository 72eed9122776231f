/**
 * The result and push schemas of `/sync` say what the TS types say. The pushes are a plain union
 * (`ServerPush`, runtime contract): the type-level checks below fail `npm run typecheck` when one
 * side changes without the other; the tests check that the validators accept what the types allow.
 */
import type { Static } from '@sinclair/typebox';
import type { ConnectionEndReason, EffectiveSettings, RemoteUpstream, ServerPush } from '../messaging/runtime-push.js';
import { validator } from '../validation/validate.js';
import {
  EdgeValidators,
  SYNC_CONNECTION_END_REASONS,
  SYNC_PUSHES,
  SYNC_PUSH_TYPES,
  SYNC_REQUEST_TYPES,
  SYNC_PUSH_EXAMPLES,
  SYNC_REQUEST_DATA,
  SYNC_REQUEST_EXAMPLES,
  SYNC_RESULT_DATA,
  type SyncEffectiveSettings,
  type SyncPushType,
  type SyncRemoteUpstream,
  type SyncServerPush,
} from './index.js';

/** true when A and B are the same type (optional and nullable fields included). */
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

// Each line fails to compile when the schema and the TS type disagree.
const sameUnion: Equals<SyncServerPush, ServerPush> = true;
const samePushes: { [K in SyncPushType]: Equals<Static<(typeof SYNC_PUSHES)[K]>, Extract<ServerPush, { type: K }>> } =
  Object.fromEntries(SYNC_PUSH_TYPES.map((type) => [type, true])) as {
    [K in SyncPushType]: true;
  };
const sameSettings: Equals<Static<typeof SyncEffectiveSettings>, EffectiveSettings> = true;
const sameUpstream: Equals<Static<typeof SyncRemoteUpstream>, RemoteUpstream> = true;
const sameReasons: Equals<(typeof SYNC_CONNECTION_END_REASONS)[number], ConnectionEndReason> = true;

describe('/sync result and push schemas', () => {
  it('agree with the TS types (checked when compiling)', () => {
    expect([sameUnion, sameSettings, sameUpstream, sameReasons, ...Object.values(samePushes)]).not.toContain(false);
  });

  it('has a result schema for every request type and a schema for every push type', () => {
    expect(Object.keys(SYNC_RESULT_DATA).sort()).toEqual([...SYNC_REQUEST_TYPES].sort());
    expect([...SYNC_PUSH_TYPES].sort()).toEqual(Object.keys(SYNC_PUSH_EXAMPLES).sort());
  });

  it.each(Object.entries(SYNC_PUSH_EXAMPLES))(
    'accepts a %s push frame, and refuses it with an unknown field',
    (_type, push) => {
      expect(EdgeValidators.SyncPushFrame.errors({ type: 'push', push })).toEqual([]);
      expect(EdgeValidators.SyncPushFrame.check({ type: 'push', push: { ...push, extra: 1 } })).toBe(false);
    },
  );

  it('refuses a push of an unknown type, or missing a field its type requires', () => {
    expect(EdgeValidators.SyncPushFrame.check({ type: 'push', push: { type: 'weather' } })).toBe(false);
    const { reason: _reason, ...noReason } = SYNC_PUSH_EXAMPLES['connection.ended'];
    expect(EdgeValidators.SyncPushFrame.check({ type: 'push', push: noReason })).toBe(false);
  });

  it.each(Object.entries(SYNC_REQUEST_EXAMPLES))('has a valid example of %s and of its result', (type, example) => {
    const requestType = type as keyof typeof SYNC_REQUEST_EXAMPLES;
    expect(validator(SYNC_REQUEST_DATA[requestType]).errors(example.data)).toEqual([]);
    expect(validator(SYNC_RESULT_DATA[requestType]).errors(example.result)).toEqual([]);
  });

  it('reads the result of a register as the gateway writes it', () => {
    const result = {
      protocolVersion: 2,
      applicationId: 'app-1',
      userId: 'u-1',
      deviceId: 'd-1',
      clientId: 'c-1',
      gatewayId: 'g-1',
      resumed: true,
      channels: [{ channelId: 'room-1', claim: { id: 'room-1' } }],
      connections: [
        {
          connectionId: 'cn-1',
          channelId: 'room-1',
          type: 'sfu',
          state: 'connected',
          localAudioMuted: false,
          localVideoMuted: true,
          mediaServerId: 'ms-1',
          settings: null,
        },
      ],
      droppedPushes: 0,
      iceServers: [{ urls: ['stun:127.0.0.1:3478'] }, { urls: ['turn:127.0.0.1'], username: '1:c', credential: 'x' }],
    };
    expect(EdgeValidators.SyncRegisterResult.errors(result)).toEqual([]);
    expect(EdgeValidators.SyncRegisterResult.errors({ ...result, iceServers: [{ url: 'stun:x' }] })).not.toEqual([]);
  });

  it('refuses results the gateway never writes', () => {
    const open = SYNC_REQUEST_EXAMPLES['connection.open'].result;
    expect(EdgeValidators.SyncConnectionOpenResult.check({ ...open, state: 'connected' })).toBe(false);
    const join = SYNC_REQUEST_EXAMPLES.join.result;
    expect(EdgeValidators.SyncJoinResult.check({ ...join, upstreams: [{ connectionId: 'x' }] })).toBe(false);
    expect(EdgeValidators.SyncMessageResult.check({ delivered: -1 })).toBe(false);
  });
});
