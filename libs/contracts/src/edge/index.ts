/**
 * Client edge contracts: the `/sync` frame protocol, the connection state machine and the client
 * token codec. Export pattern as in interface-a/: `EdgeSchemas` names every object schema of this
 * folder, `EdgeValidators.<Name>` is its validator (compiled on first use).
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
  SyncConnectionOfferData,
  SyncConnectionSubscribeData,
  SyncOfferDescription,
} from './sync-signalling.js';

export * from './sync-frames.js';
export * from './sync-signalling.js';
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
  SyncStatsData,
  SyncMessageRecipient,
  SyncMessageData,
  SyncClientUpdateData,
  SyncEmptyData,
  SyncErrorBody,
  SyncResultFrame,
  SyncErrorFrame,
  SyncPushFrame,
} as const;

export const EdgeValidators = validatorsFor(EdgeSchemas);
