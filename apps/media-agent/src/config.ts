import { commonSettings, int, list, loadConfig, str, url, type ConfigOf } from '@switchboard/config';

export const settings = {
  ...commonSettings(8086),
  janusUrl: url({
    env: 'JANUS_URL',
    default: 'ws://127.0.0.1:8188/',
    protocols: ['ws', 'wss'],
    description: 'WebSocket URL of the Janus API of the Janus beside this agent',
  }),
  janusAdminUrl: url({
    env: 'JANUS_ADMIN_URL',
    default: 'ws://127.0.0.1:7188/',
    protocols: ['ws', 'wss'],
    description: 'WebSocket URL of the Janus Admin API',
  }),
  janusAdminSecret: str({
    env: 'JANUS_ADMIN_SECRET',
    sensitive: true,
    minLength: 1,
    description: 'admin_secret of the Janus Admin API (janus.jcfg)',
  }),
  janusRoomAdminKey: str({
    env: 'JANUS_ROOM_ADMIN_KEY',
    sensitive: true,
    minLength: 1,
    description: 'admin_key of the VideoRoom, AudioBridge and TextRoom plugins: only the agent may create rooms',
  }),
  janusRequestTimeoutMs: int({
    env: 'JANUS_REQUEST_TIMEOUT_MS',
    default: 2000,
    min: 50,
    max: 60000,
    description: 'A Janus request without an answer in this time counts as Janus not answering',
  }),
  janusReconnectMinMs: int({
    env: 'JANUS_RECONNECT_MIN_MS',
    default: 200,
    min: 10,
    max: 60000,
    description: 'First delay before reconnecting to Janus; doubled after each failure',
  }),
  janusReconnectMaxMs: int({
    env: 'JANUS_RECONNECT_MAX_MS',
    default: 5000,
    min: 10,
    max: 300000,
    description: 'Longest delay between two attempts to reconnect to Janus',
  }),
  janusKeepAliveSeconds: int({
    env: 'JANUS_KEEPALIVE_SECONDS',
    default: 15,
    min: 1,
    max: 3600,
    description:
      "Interval of the keep-alive of the agent's Janus session; below the session_timeout of janus.jcfg (60 s by default)",
  }),
  mediaServerId: str({
    env: 'MEDIA_SERVER_ID',
    optional: true,
    // The registry takes only UUIDs as media server ids (interface A's mediaServerId).
    pattern: /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
    description:
      'Id of this media server, a UUID. Unset: a UUID kept in MEDIA_AGENT_DATA_DIR/media-server-id, so it survives restarts',
  }),
  mediaAgentDataDir: str({
    env: 'MEDIA_AGENT_DATA_DIR',
    default: '.data/media-agent',
    minLength: 1,
    description: "Directory of the agent's own files (the media server id)",
  }),
  mediaRecordingsDir: str({
    env: 'MEDIA_RECORDINGS_DIR',
    optional: true,
    minLength: 1,
    description:
      'Directory of the recordings Janus writes for the agent (`.mjr`, converted files, manifests); unset: MEDIA_AGENT_DATA_DIR/recordings. Janus must be able to write there, outside its janus.jcfg protected_folders',
  }),
  janusRecordingsDir: str({
    env: 'JANUS_RECORDINGS_DIR',
    optional: true,
    minLength: 1,
    description:
      "The same directory as Janus's container mounts it, when that path differs (Kubernetes: one volume in both containers); unset: MEDIA_RECORDINGS_DIR",
  }),
  janusPpRecPath: str({
    env: 'JANUS_PP_REC_PATH',
    default: 'janus-pp-rec',
    minLength: 1,
    description: 'janus-pp-rec (Debian package janus-tools): turns `.mjr` recordings into playable files',
  }),
  ffmpegPath: str({
    env: 'FFMPEG_PATH',
    default: 'ffmpeg',
    minLength: 1,
    description: 'ffmpeg, for recordings whose codec janus-pp-rec writes only as WAV (G.711, G.722)',
  }),
  mediaRecordingHandoverTimeoutMs: int({
    env: 'MEDIA_RECORDING_HANDOVER_TIMEOUT_MS',
    default: 600000,
    min: 1000,
    max: 86400000,
    description:
      "How long after a recording's stop the agent keeps trying to hand its files over (recording-service unreachable, or not knowing the connection's recording yet); then they are dropped",
  }),
  mediaServerRegion: str({
    env: 'MEDIA_SERVER_REGION',
    optional: true,
    minLength: 1,
    description: 'Deployment region of this media server (placement, listings)',
  }),
  mediaServerCapacity: int({
    env: 'MEDIA_SERVER_CAPACITY',
    default: 200,
    min: 0,
    max: 1000000,
    description: 'Most connections the registry places on this media server',
  }),
  mediaServerAddresses: list({
    env: 'MEDIA_SERVER_ADDRESSES',
    default: [],
    description:
      'Addresses clients reach this Janus at (e.g. udp://203.0.113.7:40000-40999), comma-separated; announced in every heartbeat. `{publicIp}` stands for MEDIA_SERVER_PUBLIC_IP',
  }),
  mediaServerPublicIp: str({
    env: 'MEDIA_SERVER_PUBLIC_IP',
    optional: true,
    pattern: /^[0-9a-fA-F:.]{2,45}$/,
    description:
      "The IP address of this media server's host, put in place of `{publicIp}` in MEDIA_SERVER_ADDRESSES (Kubernetes: the node's address, from status.hostIP)",
  }),
  mediaHeartbeatIntervalMs: int({
    env: 'MEDIA_HEARTBEAT_INTERVAL_MS',
    default: 2000,
    min: 50,
    max: 60000,
    description:
      'Interval of the heartbeats (and of the Janus `info` check behind each); well below SERVER_HEARTBEAT_TIMEOUT_SECONDS of runtime-registry',
  }),
  mediaStatsIntervalMs: int({
    env: 'MEDIA_STATS_INTERVAL_MS',
    default: 5000,
    min: 100,
    max: 600000,
    description:
      'Interval of the statistics (connection.stats per connection from the Janus Admin API, then server.stats)',
  }),
};

export type MediaAgentConfig = ConfigOf<typeof settings>;

export function loadMediaAgentConfig(env: Record<string, string | undefined> = process.env): MediaAgentConfig {
  return loadConfig(settings, env);
}
