import type { StatsReportLike } from './platform.js';

/** What a connection reports with the `stats` request (docs/sync-protocol.md, "Requests"). */
export interface ConnectionStats {
  bytesSent: number;
  bytesReceived: number;
  packetsSent: number;
  packetsReceived: number;
  packetsLost: number;
  /** Seconds; the largest of the received streams. */
  jitter?: number;
  /** Seconds. */
  roundTripTime?: number;
  /** Bits per second since the previous report. */
  sendBitrate?: number;
  receiveBitrate?: number;
  frameWidth?: number;
  frameHeight?: number;
  framesPerSecond?: number;
}

interface RtcStat {
  type: string;
  kind?: string;
  mediaType?: string;
  bytesSent?: number;
  bytesReceived?: number;
  packetsSent?: number;
  packetsReceived?: number;
  packetsLost?: number;
  jitter?: number;
  roundTripTime?: number;
  currentRoundTripTime?: number;
  nominated?: boolean;
  state?: string;
  frameWidth?: number;
  frameHeight?: number;
  framesPerSecond?: number;
}

const add = (total: number, value: number | undefined) => total + (typeof value === 'number' ? value : 0);
const larger = (current: number | undefined, value: number | undefined) =>
  typeof value !== 'number' ? current : current === undefined ? value : Math.max(current, value);

/** Sums a `getStats()` report: RTP totals, the worst jitter, the round trip and the video frame size. */
export function summarizeStats(report: StatsReportLike): ConnectionStats {
  const stats: ConnectionStats = { bytesSent: 0, bytesReceived: 0, packetsSent: 0, packetsReceived: 0, packetsLost: 0 };
  let pairRoundTrip: number | undefined;
  report.forEach((stat: RtcStat) => {
    const video = (stat.kind ?? stat.mediaType) === 'video';
    if (stat.type === 'outbound-rtp') {
      stats.bytesSent = add(stats.bytesSent, stat.bytesSent);
      stats.packetsSent = add(stats.packetsSent, stat.packetsSent);
    } else if (stat.type === 'inbound-rtp') {
      stats.bytesReceived = add(stats.bytesReceived, stat.bytesReceived);
      stats.packetsReceived = add(stats.packetsReceived, stat.packetsReceived);
      stats.packetsLost = add(stats.packetsLost, stat.packetsLost);
      stats.jitter = larger(stats.jitter, stat.jitter);
    } else if (stat.type === 'remote-inbound-rtp') {
      stats.roundTripTime = larger(stats.roundTripTime, stat.roundTripTime);
    } else if (stat.type === 'candidate-pair' && (stat.nominated || stat.state === 'succeeded')) {
      pairRoundTrip = larger(pairRoundTrip, stat.currentRoundTripTime);
    }
    if (video && (stat.type === 'outbound-rtp' || stat.type === 'inbound-rtp')) {
      stats.frameWidth = larger(stats.frameWidth, stat.frameWidth);
      stats.frameHeight = larger(stats.frameHeight, stat.frameHeight);
      stats.framesPerSecond = larger(stats.framesPerSecond, stat.framesPerSecond);
    }
  });
  stats.roundTripTime ??= pairRoundTrip;
  return withoutUndefined(stats);
}

/** Adds the bitrates since `previous` (taken `elapsedMs` earlier). */
export function withBitrates(stats: ConnectionStats, previous: ConnectionStats | undefined, elapsedMs: number) {
  if (!previous || elapsedMs <= 0) return stats;
  const perSecond = 8000 / elapsedMs;
  return {
    ...stats,
    sendBitrate: Math.max(0, Math.round((stats.bytesSent - previous.bytesSent) * perSecond)),
    receiveBitrate: Math.max(0, Math.round((stats.bytesReceived - previous.bytesReceived) * perSecond)),
  };
}

function withoutUndefined<T extends object>(value: T): T {
  for (const key of Object.keys(value) as Array<keyof T>) if (value[key] === undefined) delete value[key];
  return value;
}
