import type { MediaAgentEvent, MediaStats, MediaStreamStats, TransportInfo } from '@switchboard/contracts';
import { mediaStats } from '../model/records.js';

type ConnectionStatsEvent = Extract<MediaAgentEvent, { kind: 'connection.stats' }>;

/**
 * A connection's figures from its media server as the MediaStats a client reports: from the client's
 * side (what Janus received, the client sent), audio and video summed. Janus measures no frame size
 * or rate: those stay null, and the connection's video stream keeps its declared size.
 */
export function agentConnectionStats(event: ConnectionStatsEvent, now: number): MediaStats {
  const kinds = [event.audio, event.video].filter((s): s is MediaStreamStats => s !== undefined);
  const sum = (pick: (s: MediaStreamStats) => number) => kinds.reduce((total, s) => total + pick(s), 0);
  const most = (pick: (s: MediaStreamStats) => number | undefined) => {
    const values = kinds.map(pick).filter((v): v is number => v !== undefined);
    return values.length ? Math.max(...values) : null;
  };
  return mediaStats(
    {
      timestamp: now,
      bytesSent: sum((s) => s.bytesReceived),
      bytesReceived: sum((s) => s.bytesSent),
      packetsSent: sum((s) => s.packetsReceived),
      packetsReceived: sum((s) => s.packetsSent),
      // Lost on the way in (Janus counts them) and on the way out (the client reports them).
      packetsLost: sum((s) => s.packetsLost + s.packetsLostByRemote),
      jitter: most((s) => Math.max(s.jitterMs, s.jitterRemoteMs)),
      roundTripTime: most((s) => s.rttMs),
      sendBitrate: sum((s) => s.bitrateReceived),
      receiveBitrate: sum((s) => s.bitrateSent),
    },
    now,
  );
}

/** Janus's selected pair: `<address>:<port> [<type>,<transport>] <-> <address>:<port> [<type>,<transport>]`. */
const SELECTED_PAIR = /^(\S+):(\d+) \[(\w+),(\w+)\] <-> (\S+):(\d+) \[(\w+),(\w+)\]$/;

/**
 * The connection's transport from its media server's selected ICE pair, from the client's side (its
 * local candidate is Janus's remote one); null when Janus has no pair or says it otherwise.
 */
export function agentTransport(event: ConnectionStatsEvent): TransportInfo | null {
  const pair = event.selectedPair ? SELECTED_PAIR.exec(event.selectedPair) : null;
  if (!pair) return null;
  const [, janusAddress, janusPort, janusType, , clientAddress, clientPort, clientType, transport] = pair;
  const protocol = transport === 'udp' || transport === 'tcp' ? transport : null;
  return {
    id: `${event.connectionId}:transport`,
    protocol,
    localAddress: `${clientAddress}:${clientPort}`,
    remoteAddress: `${janusAddress}:${janusPort}`,
    relayed: janusType === 'relay' || clientType === 'relay',
    state: event.connected ? 'connected' : 'disconnected',
  };
}
