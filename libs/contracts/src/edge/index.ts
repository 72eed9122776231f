/**
 * Client edge contracts: the `/sync` frame protocol (requests, results, pushes, error codes, its
 * AsyncAPI document), the connection state machine and the client token codec. Export pattern as in
 * interface-a/: `EdgeSchemas` names every object schema of this folder, `EdgeValidators.<Name>` is its
 * validator (compiled on first use).
 */
import { validatorsFor } from '../interface-a/record-schema.js';
import {
  SyncAudioStream,
  SyncClientUpdateData,
  SyncConnectionCloseData,
  SyncConnectionOpenData,
  SyncConnectionStateData,
  SyncConnectionUpdateData,
  SyncDataStream,
  SyncEmptyData,
  SyncErrorBody,
  SyncErrorFrame,
  SyncJoinData,
  SyncLeaveData,
  SyncMessageData,
  SyncMessageRecipient,
  SyncPushFrame,
  SyncRegisterData,
  SyncRequestFrame,
  SyncResultFrame,
  SyncStatsData,
  SyncStreams,
  SyncVideoStream,
} from './sync-frames.js';
import {
  SyncAnswerDescription,
  SyncConnectionAnswerData,
  SyncConnectionCandidatesData,
  SyncConnectionRelayData,
  SyncConnectionOfferData,
  SyncConnectionSubscribeData,
  SyncOfferDescription,
} from './sync-signalling.js';
import {
  SyncChannelResult,
  SyncConnectionOfferResult,
  SyncConnectionOpenResult,
  SyncConnectionResult,
  SyncConnectionState,
  SyncConnectionStateResult,
  SyncConnectionSubscribeResult,
  SyncConnectionUpdateResult,
  SyncEmptyResult,
  SyncIceServer,
  SyncJoinedChannel,
  SyncJoinResult,
  SyncMessageResult,
  SyncPingResult,
  SyncRegisterResult,
} from './sync-results.js';
import {
  SyncClaimUpdatedPush,
  SyncClientUpdatedPush,
  SyncConnectionEndedPush,
  SyncConnectionRelayedPush,
  SyncConnectionOfferPush,
  SyncConnectionStatePush,
  SyncEffectiveSettings,
  SyncKickedPush,
  SyncMessagePush,
  SyncMessageSender,
  SyncRemoteUpstream,
  SyncSettingsPush,
  SyncUnregisteredPush,
  SyncUpstreamClosedPush,
  SyncUpstreamOpenedPush,
} from './sync-pushes.js';

export * from './sync-frames.js';
export * from './sync-signalling.js';
export * from './sync-results.js';
export * from './sync-pushes.js';
export * from './sync-request-errors.js';
export * from './sync-close-codes.js';
export * from './sync-examples.js';
export * from './sync-asyncapi.js';
export * from './connection-states.js';
export * from './client-token-codec.js';
export * from './liveswitch-token-writer.js';

export const EdgeSchemas = {
  SyncRequestFrame,
  SyncRegisterData,
  SyncJoinData,
  SyncLeaveData,
  SyncAudioStream,
  SyncVideoStream,
  SyncDataStream,
  SyncStreams,
  SyncConnectionOpenData,
  SyncConnectionStateData,
  SyncConnectionUpdateData,
  SyncConnectionCloseData,
  SyncOfferDescription,
  SyncAnswerDescription,
  SyncConnectionOfferData,
  SyncConnectionSubscribeData,
  SyncConnectionAnswerData,
  SyncConnectionCandidatesData,
  SyncConnectionRelayData,
  SyncStatsData,
  SyncMessageRecipient,
  SyncMessageData,
  SyncClientUpdateData,
  SyncEmptyData,
  SyncErrorBody,
  SyncResultFrame,
  SyncErrorFrame,
  SyncPushFrame,
  SyncIceServer,
  SyncConnectionState,
  SyncJoinedChannel,
  SyncRegisterResult,
  SyncJoinResult,
  SyncChannelResult,
  SyncConnectionOpenResult,
  SyncConnectionStateResult,
  SyncConnectionUpdateResult,
  SyncConnectionResult,
  SyncConnectionOfferResult,
  SyncConnectionSubscribeResult,
  SyncMessageResult,
  SyncPingResult,
  SyncEmptyResult,
  SyncEffectiveSettings,
  SyncRemoteUpstream,
  SyncMessageSender,
  SyncMessagePush,
  SyncKickedPush,
  SyncSettingsPush,
  SyncClientUpdatedPush,
  SyncClaimUpdatedPush,
  SyncUnregisteredPush,
  SyncConnectionStatePush,
  SyncConnectionOfferPush,
  SyncConnectionEndedPush,
  SyncConnectionRelayedPush,
  SyncUpstreamOpenedPush,
  SyncUpstreamClosedPush,
} as const;

export const EdgeValidators = validatorsFor(EdgeSchemas);
