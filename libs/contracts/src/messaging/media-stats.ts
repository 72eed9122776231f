/**
 * The statistics events of the media-agent (issue 22, item 6), published on the agent's event
 * subject every MEDIA_STATS_INTERVAL_MS: one `connection.stats` per connection (from Janus's Admin
 * API `handle_info`: its transport and RTCP figures) and one `server.stats` for the whole server.
 */
import { Type, type Static } from '@sinclair/typebox';

const Id = () => Type.String({ minLength: 1, maxLength: 256 });
const Count = () => Type.Integer({ minimum: 0 });

/** The figures of one media kind of a connection, summed over its streams (mids) of that kind. */
export const MediaStreamStats = Type.Object(
  {
    /** From the client to Janus. */
    packetsReceived: Count(),
    bytesReceived: Count(),
    /** From Janus to the client. */
    packetsSent: Count(),
    bytesSent: Count(),
    /** Bits/s each way since the previous statistics of the connection (0 in the first). */
    bitrateReceived: Count(),
    bitrateSent: Count(),
    /** Packets Janus found missing from the client, and those the client reported missing (RTCP). */
    packetsLost: Count(),
    packetsLostByRemote: Count(),
    /** Interarrival jitter (ms) Janus measures on what it receives, and the client reports (RTCP). */
    jitterMs: Type.Number({ minimum: 0 }),
    jitterRemoteMs: Type.Number({ minimum: 0 }),
    /** Round-trip time (ms) from RTCP; absent until Janus has one. */
    rttMs: Type.Optional(Type.Number({ minimum: 0 })),
    nacksReceived: Count(),
    nacksSent: Count(),
  },
  { $id: 'MediaStreamStats', additionalProperties: false },
);
export type MediaStreamStats = Static<typeof MediaStreamStats>;

export const MEDIA_STATS_EVENTS = {
  /** One connection's figures; `connected`: its PeerConnection is up (Janus webrtcup, no hangup since). */
  'connection.stats': Type.Object(
    {
      kind: Type.Literal('connection.stats'),
      applicationId: Id(),
      channelId: Id(),
      connectionId: Id(),
      role: Type.Union([Type.Literal('publisher'), Type.Literal('subscriber'), Type.Literal('mixer')]),
      connected: Type.Boolean(),
      /** The selected ICE pair (`local <-> remote`), when ICE has one. */
      selectedPair: Type.Optional(Type.String({ maxLength: 512 })),
      audio: Type.Optional(MediaStreamStats),
      video: Type.Optional(MediaStreamStats),
    },
    { additionalProperties: false, $id: 'MediaAgent:connection.stats' },
  ),
  /**
   * The server's figures (interface A's media server statistics): connections up (`active`) and
   * joined but not up yet or hung up (`pending`), rooms and mixers, and bits/s each way.
   */
  'server.stats': Type.Object(
    {
      kind: Type.Literal('server.stats'),
      activeConnections: Count(),
      pendingConnections: Count(),
      rooms: Count(),
      mixers: Count(),
      bitrateReceived: Count(),
      bitrateSent: Count(),
    },
    { additionalProperties: false, $id: 'MediaAgent:server.stats' },
  ),
} as const;
