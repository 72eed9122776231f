/** Shapes the pages read (interface A section 2.A, interface B entity sets). */
export interface ApplicationSnapshot {
  id: string;
  channelCount: number;
  userCount: number;
  deviceCount: number;
  clientCount: number;
  connectionCount: number;
}
export interface ChannelSnapshot {
  id: string;
  userCount: number;
  deviceCount: number;
  clientCount: number;
  connectionCount: number;
}
export interface UserInChannel {
  id: string;
  alias: string | null;
  deviceCount: number;
  clientCount: number;
  connectionCount: number;
}
export interface DeviceInChannel {
  id: string;
  userId: string;
  alias: string | null;
  clientCount: number;
  connectionCount: number;
}
export interface ClientInChannel {
  id: string;
  userId: string;
  deviceId: string;
  roles: string[];
  connectionCount: number;
}
export interface ConnectionInfo {
  id: string;
  applicationId: string;
  channelId: string;
  userId: string;
  userAlias: string | null;
  deviceId: string;
  clientId: string;
  type: string;
  state: string;
  tag: string | null;
  localAudioMuted: boolean;
  localVideoMuted: boolean;
  localAudioUnmuteDisabled: boolean;
  localVideoUnmuteDisabled: boolean;
  recording: boolean;
  [field: string]: unknown;
}
export interface WebhookDelivery {
  id: string;
  deliveryId: string;
  webhookId: string;
  applicationId: string;
  channelId: string | null;
  eventType: string;
  url: string;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  success: boolean;
  final: boolean;
  attemptedOn: number;
  replayOf: string | null;
}
export interface ParkedEvent {
  id: string;
  service: string;
  consumer: string;
  subject: string;
  payloadPreview: string;
  error: string;
  attempts: number;
  status: 'Parked' | 'Replayed';
  replays: number;
  parkedOn: number;
}
export interface ODataList<T> {
  value: T[];
}
export interface ChangeRecord {
  id: string;
  type: 'Create' | 'Update' | 'Delete';
  entityType: string;
  entityId: string;
  propertyName: string;
  oldValue: string | null;
  newValue: string | null;
  changedOn: number;
  changedBy: string;
}
export interface MediaServer {
  id: string;
  active: boolean;
  applications: string[];
  computer: { hostName: string; ipAddresses: string[]; region: string | null; version: string | null };
}
export interface MediaServerStatistics {
  mediaServerId: string;
  pendingConnections: number;
  activeConnections: number;
  totalClosedConnections: number;
  totalFailedConnections: number;
}
/** One stats sample of a connection, as the console's `/api/stats` keeps them (MediaStats fields). */
export interface StatsSample {
  timestamp: number;
  sendBitrate: number | null;
  receiveBitrate: number | null;
  packetsReceived: number | null;
  packetsLost: number | null;
  jitter: number | null;
  roundTripTime: number | null;
}
export interface ConnectionRecording {
  id: string;
  channelId: string;
  userId: string;
  deviceId: string;
  clientId: string;
  connectionId: string;
  hasAudio: boolean;
  hasVideo: boolean;
  audioUrl: string | null;
  videoUrl: string | null;
}
export interface ChannelRecording {
  id: string;
  applicationId: string;
  channelId: string;
  tag: string | null;
  deleted: boolean;
  startTimestamp: string;
  stopTimestamp: string | null;
  expiryTimestamp: string | null;
  hasAudio: boolean;
  hasVideo: boolean;
  ready: boolean;
  fileSize: number | null;
  url: string | null;
  connectionRecordings: ConnectionRecording[];
}
export interface ApplicationConfig {
  id: string;
  applicationId: string | null;
  tag: string | null;
  disabled: boolean | null;
}
export interface ChannelConfig {
  id: string;
  applicationConfigId: string;
  channelIdPattern: string;
}
/** An application or channel webhook (interface B); the parent field names its config. */
export interface Webhook {
  id: string;
  applicationConfigId?: string;
  channelConfigId?: string | null;
  name: string | null;
  url: string | null;
  disabled: boolean;
  batch: boolean;
  reliable: boolean;
  events: string[] | null;
}
export interface UsageRecord {
  id: string;
  applicationId: string;
  startTimestamp: string;
  endTimestamp: string;
  participantMessages: number;
  participantMinutes: Array<{ key: number; value: { maxPixelCount?: number; usageParticipantMinutes?: number } }>;
}
export interface Organization {
  id: string;
  name: string | null;
  disabled: boolean;
  createdOn: number;
}
export interface ApiKey {
  id: string;
  key: string | null;
  tag: string | null;
  disabled: boolean;
  createdOn: number;
  createdBy: string | null;
}
