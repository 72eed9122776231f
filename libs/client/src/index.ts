export { Client, type ClientEvents, type ClientOptions } from './client.js';
export { Connection, type ConnectionEvents, type EndReason } from './connection.js';
export {
  DownstreamConnection,
  MixerConnection,
  UpstreamConnection,
  type LocalMediaOptions,
  type PublishOptions,
  type RemoteUpstreamRef,
} from './connections.js';
export { PeerConnection, type PeerOptions } from './peer.js';
export { ClientError, SyncError, type ClientErrorCode, type SyncErrorCode, type SyncErrorDetail } from './errors.js';
export type { ReconnectOptions } from './reconnect.js';
export type { ConnectionStats } from './stats.js';
export type {
  DataChannelLike,
  IceServer,
  MediaTrackLike,
  PeerConnectionConstructor,
  PeerConnectionLike,
  WebSocketConstructor,
  WebSocketLike,
} from './platform.js';
export type {
  ConnectionEndReason,
  ConnectionState,
  EffectiveSettings,
  RemoteUpstream,
  ServerPush,
  SyncRegisterResult,
} from '@switchboard/contracts';
