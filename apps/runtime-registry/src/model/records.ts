/**
 * From stored hashes to the interface A records and the webhook event parts (the connection info
 * mapping is in the README, "Connection info mapping").
 */
import type {
  ConnectionInfo,
  ConnectionState,
  ConnectionType,
  DataStreamInfo,
  MediaFormatInfo,
  MediaStats,
  MediaStreamInfo,
  StreamDescription,
  StreamDirection,
  TransportInfo,
  WebhookEventClient,
  WebhookEventConnection,
} from '@switchboard/contracts';
import { WEBHOOK_CONNECTION_FIELDS } from '@switchboard/contracts';
import type { ClientKey } from './targets.js';
import type { ResolvedSettings } from './settings.js';

export interface ClientRecord extends ClientKey {
  userAlias: string | null;
  deviceAlias: string | null;
  tag: string | null;
  roles: string[];
  protocol: string | null;
  gatewayId: string | null;
}

export function parseJson<T>(raw: string | undefined, fallback: T): T {
  if (raw === undefined) return fallback;
  try {
    return JSON.parse(raw) as T;
  } catch {
    return fallback;
  }
}

/** Lua's cjson writes an empty table as `{}`: read such a value as a list. */
export function asList<T>(value: unknown): T[] {
  return Array.isArray(value) ? (value as T[]) : [];
}

export function asHash(value: unknown): Record<string, string> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, string>) : {};
}

export function clientRecord(key: ClientKey, hash: Record<string, string>): ClientRecord {
  const roles = parseJson<unknown>(hash.roles, []);
  return {
    ...key,
    userAlias: hash.userAlias ?? null,
    deviceAlias: hash.deviceAlias ?? null,
    tag: hash.tag ?? null,
    roles: Array.isArray(roles) ? roles.filter((r): r is string => typeof r === 'string') : [],
    protocol: hash.protocol ?? null,
    gatewayId: hash.gatewayId ?? null,
  };
}

/** `opus/48000/2` -> { name: 'opus', clockRate: 48000, channelCount: 2 }. */
export function parseFormat(format: string): MediaFormatInfo {
  const [name = format, clock, channels, ...rest] = format.split('/');
  const clockRate = Number(clock);
  const channelCount = Number(channels);
  return {
    name,
    clockRate: Number.isInteger(clockRate) && clockRate >= 0 ? clockRate : 0,
    channelCount: Number.isInteger(channelCount) && channelCount >= 0 ? channelCount : null,
    parameters: rest.length ? rest.join('/') : null,
  };
}

const DIRECTIONS: readonly StreamDirection[] = ['sendrecv', 'sendonly', 'recvonly', 'inactive'];
function direction(value: unknown): StreamDirection {
  return DIRECTIONS.includes(value as StreamDirection) ? (value as StreamDirection) : 'inactive';
}

export interface StoredConnection {
  state: ConnectionState;
  type: ConnectionType;
  tag: string | null;
  streams: StreamDescription;
  error: { code: string; message: string } | null;
  remoteConnectionId: string | null;
  mediaServerId: string | null;
  localAudioMuted: boolean | null;
  localVideoMuted: boolean | null;
  openedAt: number;
  connectedAt: number | null;
  stats: Record<string, unknown> | null;
  /** The selected candidate pair its media server reports (src/media/agent-stats.ts). */
  transport: TransportInfo | null;
}

export function storedConnection(hash: Record<string, string>): StoredConnection {
  const flag = (v: string | undefined) => (v === undefined ? null : v === '1');
  return {
    state: (hash.state ?? 'new') as ConnectionState,
    type: (hash.type ?? 'sfu') as ConnectionType,
    tag: hash.tag ?? null,
    streams: parseJson<StreamDescription>(hash.streams, {}),
    error: parseJson<{ code: string; message: string } | null>(hash.error, null),
    remoteConnectionId: hash.remoteConnectionId ?? null,
    mediaServerId: hash.mediaServerId ?? null,
    localAudioMuted: flag(hash.localAudioMuted),
    localVideoMuted: flag(hash.localVideoMuted),
    openedAt: Number(hash.openedAt ?? 0),
    connectedAt: hash.connectedAt === undefined ? null : Number(hash.connectedAt),
    stats: parseJson<Record<string, unknown> | null>(hash.stats, null),
    transport: parseJson<TransportInfo | null>(hash.transport, null),
  };
}

/** The fields of a connection record written from a StreamDescription and the client's report. */
export function connectionFields(input: {
  tag?: string | null;
  streams?: StreamDescription;
  remoteConnectionId?: string | null;
  localAudioMuted?: boolean;
  localVideoMuted?: boolean;
  mediaServerId?: string | null;
}): { set: Record<string, string>; del: string[] } {
  const set: Record<string, string> = {};
  const del: string[] = [];
  if (input.tag !== undefined) {
    if (input.tag === null) del.push('tag');
    else set.tag = input.tag;
  }
  if (input.streams !== undefined) set.streams = JSON.stringify(input.streams);
  if (input.remoteConnectionId !== undefined && input.remoteConnectionId !== null)
    set.remoteConnectionId = input.remoteConnectionId;
  if (input.localAudioMuted !== undefined) set.localAudioMuted = input.localAudioMuted ? '1' : '0';
  if (input.localVideoMuted !== undefined) set.localVideoMuted = input.localVideoMuted ? '1' : '0';
  if (input.mediaServerId) set.mediaServerId = input.mediaServerId;
  return { set, del };
}

const count = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null);
const rate = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);

/**
 * The frame size and rate of a connection's video: from its latest stats sample (`frameWidth`,
 * `frameHeight`, `frameRate`) when it reported them, else as its stream description says (`width`,
 * `height`, `frameRate` of the described video stream); null when neither says.
 */
export function videoFrame(
  video: NonNullable<StreamDescription['video']>,
  stats: Record<string, unknown> | null,
): { width: number | null; height: number | null; frameRate: number | null } {
  const sampled = stats && count(stats.frameWidth) !== null && count(stats.frameHeight) !== null;
  return {
    width: sampled ? count(stats.frameWidth) : count(video.width),
    height: sampled ? count(stats.frameHeight) : count(video.height),
    frameRate: rate(stats?.frameRate) ?? rate(video.frameRate),
  };
}

export interface ConnectionContext {
  applicationId: string;
  channelId: string;
  connectionId: string;
  client: ClientRecord;
  conn: StoredConnection;
  settings: ResolvedSettings;
}

export function connectionInfo(ctx: ConnectionContext): ConnectionInfo {
  const { conn, client, settings, connectionId } = ctx;
  const s = conn.streams ?? {};
  const audioMutedByClient = conn.localAudioMuted ?? s.audio?.muted ?? false;
  const videoMutedByClient = conn.localVideoMuted ?? s.video?.muted ?? false;
  const audioStream: MediaStreamInfo | null = s.audio
    ? {
        id: `${connectionId}:audio`,
        tag: conn.tag,
        direction: direction(s.audio.direction),
        muted: settings.audioMuted || audioMutedByClient,
        disabled: s.audio.disabled ?? false,
        format: s.audio.formats?.[0] ?? null,
        width: null,
        height: null,
        frameRate: null,
      }
    : null;
  const frame = s.video ? videoFrame(s.video, conn.stats) : null;
  const videoStream: MediaStreamInfo | null = s.video
    ? {
        id: `${connectionId}:video`,
        tag: conn.tag,
        direction: direction(s.video.direction),
        muted: settings.videoMuted || videoMutedByClient,
        disabled: s.video.disabled ?? false,
        format: s.video.formats?.[0] ?? null,
        width: frame!.width,
        height: frame!.height,
        frameRate: frame!.frameRate,
      }
    : null;
  const dataStream: DataStreamInfo | null = s.data
    ? {
        id: `${connectionId}:data`,
        tag: conn.tag,
        direction: direction(s.data.direction),
        channelLabels: [...(s.data.channelLabels ?? [])],
      }
    : null;
  return {
    id: connectionId,
    isSip: client.protocol === 'sip',
    applicationId: ctx.applicationId,
    channelId: ctx.channelId,
    userId: client.userId,
    userAlias: client.userAlias,
    deviceId: client.deviceId,
    deviceAlias: client.deviceAlias,
    clientId: client.clientId,
    clientTag: client.tag,
    clientRoles: [...client.roles],
    clientProtocol: client.protocol,
    externalId: null,
    state: conn.state,
    tag: conn.tag,
    type: conn.type,
    recording: settings.recording,
    recordingTag: settings.recordingTag,
    error: conn.error,
    mediaId: null,
    remoteConnectionId: conn.remoteConnectionId,
    remoteMediaId: null,
    audioStream,
    audioStreams: audioStream ? [audioStream] : [],
    videoStream,
    videoStreams: videoStream ? [videoStream] : [],
    dataStream,
    transports: conn.transport ? [conn.transport] : [],
    hasAudio: Boolean(s.audio),
    hasVideo: Boolean(s.video),
    hasData: Boolean(s.data),
    localAudioMuted: settings.audioMuted || audioMutedByClient,
    localVideoMuted: settings.videoMuted || videoMutedByClient,
    localAudioUnmuteDisabled: settings.audioUnmuteDisabled,
    localVideoUnmuteDisabled: settings.videoUnmuteDisabled,
    localAudioDisabled: s.audio?.disabled ?? false,
    localVideoDisabled: s.video?.disabled ?? false,
    remoteAudioDisabled: false,
    remoteVideoDisabled: false,
    audioDirection: direction(s.audio?.direction),
    videoDirection: direction(s.video?.direction),
    dataDirection: direction(s.data?.direction),
    audioFormats: (s.audio?.formats ?? []).map(parseFormat),
    videoFormats: (s.video?.formats ?? []).map(parseFormat),
  };
}

// ---------------------------------------------------------------------------------------------
// Event parts
// ---------------------------------------------------------------------------------------------

const STAT_FIELDS = [
  'bytesSent',
  'bytesReceived',
  'packetsSent',
  'packetsReceived',
  'packetsLost',
  'jitter',
  'roundTripTime',
  'sendBitrate',
  'receiveBitrate',
  'frameWidth',
  'frameHeight',
  'frameRate',
] as const;

/**
 * A reported stats object as the MediaStats of events: known non-negative numbers, the rest null
 * (`frameRate` also from WebRTC's `framesPerSecond`). A connection's last sample is kept with it:
 * its frame size is the video stream's `width`/`height` in connection infos and events.
 */
export function mediaStats(stats: Record<string, unknown>, now: number, forClient = false): MediaStats {
  const ts = stats.timestamp;
  const out = { timestamp: typeof ts === 'number' && Number.isInteger(ts) && ts > 0 ? ts : now } as MediaStats;
  for (const field of STAT_FIELDS) {
    // WebRTC's stats call the frame rate `framesPerSecond`.
    const v = field === 'frameRate' ? (stats.frameRate ?? stats.framesPerSecond) : stats[field];
    const frame = field.startsWith('frame');
    (out as Record<string, unknown>)[field] =
      !(forClient && frame) && typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
  }
  return out;
}

export function clientPart(
  applicationId: string,
  client: ClientRecord,
  stats: MediaStats | null = null,
): WebhookEventClient {
  return {
    id: client.clientId,
    userId: client.userId,
    userAlias: client.userAlias,
    deviceId: client.deviceId,
    deviceAlias: client.deviceAlias,
    tag: client.tag,
    roles: [...client.roles],
    applicationId,
    stats,
  };
}

export function connectionPart(info: ConnectionInfo, stats: MediaStats | null = null): WebhookEventConnection {
  const out: Record<string, unknown> = {};
  for (const field of WEBHOOK_CONNECTION_FIELDS) out[field] = info[field];
  // The video stream with its frame size: usage is bucketed by pixel count.
  out.videoStream = info.videoStream;
  out.stats = stats;
  out.connectionRecording = null;
  return out as WebhookEventConnection;
}
