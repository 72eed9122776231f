import { type OnApplicationBootstrap, type BeforeApplicationShutdown } from '@nestjs/common';
import Janode, { type JanodeConnection } from 'janode';
import type { MediaStreamStats } from '@switchboard/contracts';
import type { JsonLogger } from '@switchboard/service-kit';
import { within, type JanusClient } from '../janus/janus-client.js';
import type { StatsTarget } from './handle-watch.js';
import type { MediaEvents } from './media-events.js';

export interface MediaStatsOptions {
  adminUrl: string;
  adminSecret: string;
  intervalMs: number;
  requestTimeoutMs: number;
}

export interface StatsSources {
  targets(): StatsTarget[];
  counts(): { rooms: number; mixers: number };
}

type Json = Record<string, unknown>;
const record = (value: unknown): Json => (value && typeof value === 'object' ? (value as Json) : {});
const count = (value: unknown): number => (typeof value === 'number' && value > 0 ? Math.round(value) : 0);

function emptyStats(): MediaStreamStats {
  return {
    packetsReceived: 0,
    bytesReceived: 0,
    packetsSent: 0,
    bytesSent: 0,
    bitrateReceived: 0,
    bitrateSent: 0,
    packetsLost: 0,
    packetsLostByRemote: 0,
    jitterMs: 0,
    jitterRemoteMs: 0,
    nacksReceived: 0,
    nacksSent: 0,
  };
}

/** Adds one Janus medium (`handle_info` `webrtc.media[mid]`: `stats.in/out`, `rtcp.main`) to `into`. */
function addMedium(into: MediaStreamStats, medium: Json): void {
  const stats = record(medium.stats);
  const received = record(stats.in);
  const sent = record(stats.out);
  into.packetsReceived += count(received.packets);
  into.bytesReceived += count(received.bytes);
  into.nacksReceived += count(received.nacks);
  into.packetsSent += count(sent.packets);
  into.bytesSent += count(sent.bytes);
  into.nacksSent += count(sent.nacks);
  const rtcp = record(record(medium.rtcp ?? medium.rtcp_stats).main);
  into.packetsLost += count(rtcp.lost);
  into.packetsLostByRemote += count(rtcp['lost-by-remote']);
  into.jitterMs = Math.max(into.jitterMs, count(rtcp['jitter-local']));
  into.jitterRemoteMs = Math.max(into.jitterRemoteMs, count(rtcp['jitter-remote']));
  if (typeof rtcp.rtt === 'number' && rtcp.rtt > 0) into.rttMs = Math.max(into.rttMs ?? 0, rtcp.rtt);
}

/** The figures of one `handle_info` answer, per media kind. */
export function statsOfHandleInfo(info: Json): {
  selectedPair?: string;
  audio?: MediaStreamStats;
  video?: MediaStreamStats;
} {
  const webrtc = record(info.webrtc);
  const result: { selectedPair?: string; audio?: MediaStreamStats; video?: MediaStreamStats } = {};
  const pair = record(webrtc.ice)['selected-pair'];
  if (typeof pair === 'string') result.selectedPair = pair.slice(0, 512);
  for (const medium of Object.values(record(webrtc.media)).map(record)) {
    if (medium.type !== 'audio' && medium.type !== 'video') continue;
    addMedium((result[medium.type] ??= emptyStats()), medium);
  }
  return result;
}

/**
 * Every MEDIA_STATS_INTERVAL_MS: reads each connection's figures from Janus's Admin API
 * (`handle_info` of its handle) and publishes a `connection.stats` per connection, then one
 * `server.stats` (connections up and pending, rooms, mixers, bits/s each way).
 */
export class MediaStats implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private admin?: Promise<JanodeConnection>;
  private collecting = false;
  /** Each handle's bytes at the previous turn, for the bitrates (Janus counts no bitrate it sends). */
  private readonly previous = new Map<number, { at: number; audio?: MediaStreamStats; video?: MediaStreamStats }>();

  constructor(
    private readonly janus: JanusClient,
    private readonly sources: StatsSources,
    private readonly events: MediaEvents,
    private readonly logger: JsonLogger,
    private readonly options: MediaStatsOptions,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.collect(), this.options.intervalMs);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    const admin = this.admin;
    this.admin = undefined;
    await admin?.then((connection) => connection.close()).catch(() => undefined);
  }

  private async collect(): Promise<void> {
    const sessionId = this.janus.sessionId;
    if (this.collecting || sessionId === undefined) return;
    this.collecting = true;
    try {
      const targets = this.sources.targets();
      const admin = targets.length ? await this.adminConnection() : undefined;
      let bitrateReceived = 0;
      let bitrateSent = 0;
      await Promise.all(
        targets.map(async (target) => {
          // A handle gone meanwhile has no figures this turn.
          const answer = await within(
            admin!.handleInfo(sessionId, target.handleId),
            this.options.requestTimeoutMs,
            'the Janus Admin API did not answer in time',
          ).catch(() => undefined);
          if (!answer) return;
          const figures = statsOfHandleInfo(record(answer.info));
          this.addBitrates(target.handleId, figures);
          for (const kind of [figures.audio, figures.video]) {
            bitrateReceived += kind?.bitrateReceived ?? 0;
            bitrateSent += kind?.bitrateSent ?? 0;
          }
          const { handleId: _handleId, ...connection } = target;
          this.events.publish({ kind: 'connection.stats', ...connection, ...figures });
        }),
      );
      const handles = new Set(targets.map((t) => t.handleId));
      for (const handleId of this.previous.keys()) if (!handles.has(handleId)) this.previous.delete(handleId);
      const active = targets.filter((t) => t.connected).length;
      this.events.publish({
        kind: 'server.stats',
        activeConnections: active,
        pendingConnections: targets.length - active,
        ...this.sources.counts(),
        bitrateReceived,
        bitrateSent,
      });
    } catch (e) {
      // The Admin API unreachable: the next turn connects again.
      this.logger.event('debug', 'statistics not collected', { error: (e as Error).message });
      void this.dropAdmin();
    } finally {
      this.collecting = false;
    }
  }

  private addBitrates(handleId: number, figures: { audio?: MediaStreamStats; video?: MediaStreamStats }): void {
    const now = Date.now();
    const before = this.previous.get(handleId);
    this.previous.set(handleId, { at: now, audio: figures.audio, video: figures.video });
    if (!before) return;
    const seconds = Math.max(0.001, (now - before.at) / 1000);
    for (const kind of ['audio', 'video'] as const) {
      const [was, is] = [before[kind], figures[kind]];
      if (!was || !is) continue;
      is.bitrateReceived = Math.round((Math.max(0, is.bytesReceived - was.bytesReceived) * 8) / seconds);
      is.bitrateSent = Math.round((Math.max(0, is.bytesSent - was.bytesSent) * 8) / seconds);
    }
  }

  private adminConnection(): Promise<JanodeConnection> {
    if (!this.admin) {
      const opening = within(
        Janode.connect({
          is_admin: true,
          address: { url: this.options.adminUrl, apisecret: this.options.adminSecret },
          max_retries: 0,
        }),
        this.options.requestTimeoutMs,
        'the Janus Admin API did not accept the connection in time',
      );
      this.admin = opening;
      opening.then(
        (connection) => connection.once(Janode.EVENT.CONNECTION_CLOSED, () => this.admin === opening && this.forget()),
        () => this.forget(),
      );
    }
    return this.admin;
  }

  private forget(): void {
    this.admin = undefined;
  }

  private async dropAdmin(): Promise<void> {
    const admin = this.admin;
    this.admin = undefined;
    await admin?.then((connection) => connection.close()).catch(() => undefined);
  }
}
