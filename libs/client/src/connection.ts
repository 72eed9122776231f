import type {
  ConnectionEndReason,
  ConnectionState,
  EffectiveSettings,
  ServerPush,
  SyncConnectionOpenData,
  SyncRequestDataOf,
  SyncRequestType,
  SyncResults,
} from '@switchboard/contracts';
import { Emitter } from './emitter.js';
import type { DataChannelLike, IceCandidateInit, MediaTrackLike, PeerConnectionLike } from './platform.js';
import { backgroundTimer } from './platform.js';
import { summarizeStats, withBitrates, type ConnectionStats } from './stats.js';

/** What a `connection.relayed` push carries: one of `offer`, `answer`, `candidates`. */
export type RelayedSignal = Omit<Extract<ServerPush, { type: 'connection.relayed' }>, 'type'>;

/** Why a connection ended: the server's reasons, or what the client or its session did. */
export type EndReason = ConnectionEndReason | 'closed' | 'kicked' | 'left' | 'session-lost' | 'unregistered';

export interface ConnectionEvents {
  /** The protocol state changed (`connected` comes from the media server). */
  state: [ConnectionState];
  /** Effective settings pushed by the server (or given at open). */
  settings: [EffectiveSettings];
  /** The local audio or video was muted or unmuted, by the app or by an operator (`byServer`). */
  mute: [{ kind: 'audio' | 'video'; muted: boolean; byServer: boolean; unmuteDisabled: boolean }];
  /** A remote track arrived (downstream and mcu connections). */
  track: [MediaTrackLike, unknown];
  /** A data channel opened by the other side. */
  datachannel: [DataChannelLike];
  stats: [ConnectionStats];
  /** Final: the connection is gone (its RTCPeerConnection is closed). */
  ended: [{ reason: EndReason }];
}

/** What a connection needs of its Client. */
export interface ConnectionHost {
  request<T extends SyncRequestType>(type: T, data: SyncRequestDataOf<T>): Promise<SyncResults[T]>;
  createPeerConnection(): PeerConnectionLike;
  forget(connection: Connection): void;
  reportError(error: unknown): void;
  readonly statsIntervalMs: number;
  readonly trickleIce: boolean;
}

const FINAL_STATES: ReadonlySet<ConnectionState> = new Set(['closed', 'failed']);
const MAX_CANDIDATES_PER_FRAME = 64;

/** A connection of the client, wrapping one RTCPeerConnection (docs/sync-protocol.md, "Media signalling"). */
export abstract class Connection extends Emitter<ConnectionEvents> {
  state: ConnectionState = 'new';
  settings: EffectiveSettings | null = null;
  mediaServerId: string | null = null;
  readonly peerConnection: PeerConnectionLike;
  /** The remote tracks received so far (also announced by `track` events). */
  readonly remoteTracks: MediaTrackLike[] = [];
  private settingsPushed = false;
  private readonly candidates: IceCandidateInit[] = [];
  private gatheringDone = false;
  private candidatesMayGo = false;
  private flushScheduled = false;
  private statsTimer?: ReturnType<typeof setTimeout>;
  private lastStats?: { stats: ConnectionStats; at: number };
  private endedWith?: EndReason;
  private gatheringWaiters: Array<() => void> = [];

  protected constructor(
    protected readonly host: ConnectionHost,
    readonly connectionId: string,
    readonly channelId: string,
  ) {
    super();
    this.peerConnection = host.createPeerConnection();
    this.peerConnection.onicecandidate = (event: { candidate?: { candidate?: string } | null }) =>
      this.gathered(event.candidate);
    this.peerConnection.ontrack = (event: { track: MediaTrackLike; streams?: unknown }) => {
      this.remoteTracks.push(event.track);
      this.emit('track', event.track, event.streams);
    };
    this.peerConnection.ondatachannel = (event: { channel: DataChannelLike }) =>
      this.emit('datachannel', event.channel);
    this.peerConnection.onconnectionstatechange = () => {
      if (this.peerConnection.connectionState === 'failed') void this.reportFailure();
    };
  }

  get ended(): boolean {
    return this.endedWith !== undefined;
  }

  /** Closes the connection at the server and locally. */
  async close(): Promise<void> {
    if (this.ended) return;
    this.end('closed');
    await this.host.request('connection.close', { connectionId: this.connectionId }).catch((error: unknown) => {
      this.host.reportError(error);
    });
  }

  /** Opens the connection at the gateway and walks it to `connecting`, pipelined with `then` (the signalling). */
  protected async openWith<T>(
    open: Omit<SyncConnectionOpenData, 'connectionId' | 'channelId'>,
    then: () => Promise<T>,
  ) {
    const data = { ...open, channelId: this.channelId, connectionId: this.connectionId };
    const requests = [
      this.host.request('connection.open', data).then((opened) => {
        this.mediaServerId = opened.mediaServerId;
        if (!this.settingsPushed) this.applySettings(opened.settings);
      }),
      this.host.request('connection.state', { connectionId: this.connectionId, state: 'initializing' }),
      this.host
        .request('connection.state', { connectionId: this.connectionId, state: 'connecting' })
        .then(() => this.state === 'new' && this.applyState('connecting')),
    ];
    const signalling = then();
    const results = await Promise.allSettled([...requests, signalling]);
    const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) {
      // Opened at the server but not signalled (e.g. the media server refused the SDP): close it there too.
      if (results[0]!.status === 'fulfilled') await this.close();
      else this.end('closed');
      throw failed.reason;
    }
    this.startStats();
    return signalling;
  }

  /** The local description as sent: with every candidate when trickle ICE is off. */
  protected async localDescription(): Promise<{ type: string; sdp: string }> {
    if (!this.host.trickleIce) await this.gatheringComplete();
    const local = this.peerConnection.localDescription;
    if (!local) throw new Error('no local description');
    return { type: local.type, sdp: local.sdp };
  }

  /** Called once the offer or answer request was sent: candidates may follow it. */
  protected signalled(): void {
    this.candidatesMayGo = this.host.trickleIce;
    this.scheduleFlush();
  }

  // ---- pushes, routed here by the Client --------------------------------------------------------

  /** @internal */
  applySettings(settings: EffectiveSettings, pushed = false): void {
    this.settingsPushed ||= pushed;
    const previous = this.settings;
    this.settings = settings;
    this.emit('settings', settings);
    this.settingsChanged(previous, settings);
  }

  /** @internal */
  applyState(state: ConnectionState): void {
    if (this.ended || state === this.state) return;
    this.state = state;
    this.emit('state', state);
    if (FINAL_STATES.has(state)) this.end(state === 'failed' ? 'failed' : 'closed');
  }

  /** @internal A renegotiation offer of the media server. */
  renegotiate(offer: { type: 'offer'; sdp: string }): Promise<void> {
    void offer;
    return Promise.resolve();
  }

  /** @internal Signalling of the other side of a `peer` connection (a `connection.relayed` push). */
  relayed(push: RelayedSignal): void {
    void push;
  }

  /** @internal Local end: stops its timers and closes the RTCPeerConnection. */
  end(reason: EndReason): void {
    if (this.ended) return;
    this.endedWith = reason;
    clearTimeout(this.statsTimer);
    for (const resolve of this.gatheringWaiters) resolve();
    this.gatheringWaiters = [];
    // werift's close is asynchronous; a second close of either kind is harmless.
    Promise.resolve()
      .then(() => this.peerConnection.close())
      .catch(() => undefined);
    this.host.forget(this);
    if (!FINAL_STATES.has(this.state)) {
      this.state = reason === 'failed' ? 'failed' : 'closed';
      this.emit('state', this.state);
    }
    this.emit('ended', { reason });
  }

  protected settingsChanged(previous: EffectiveSettings | null, settings: EffectiveSettings): void {
    void previous;
    void settings;
  }

  // ---- trickle ICE and stats ----------------------------------------------------------------------

  private gathered(candidate: { candidate?: string; toJSON?: () => IceCandidateInit } | null | undefined): void {
    if (!candidate?.candidate) {
      this.gatheringDone = true;
      for (const resolve of this.gatheringWaiters) resolve();
      this.gatheringWaiters = [];
    } else {
      const init = candidate.toJSON ? candidate.toJSON() : (candidate as IceCandidateInit);
      this.candidates.push({
        candidate: init.candidate,
        sdpMid: init.sdpMid ?? null,
        sdpMLineIndex: init.sdpMLineIndex ?? null,
        usernameFragment: init.usernameFragment ?? null,
      });
    }
    this.scheduleFlush();
  }

  private gatheringComplete(): Promise<void> {
    if (this.gatheringDone || this.peerConnection.iceGatheringState === 'complete') return Promise.resolve();
    return new Promise((resolve) => this.gatheringWaiters.push(resolve));
  }

  // Candidates gathered in the same few milliseconds travel in one frame.
  private scheduleFlush(): void {
    if (!this.candidatesMayGo || this.flushScheduled || this.ended) return;
    this.flushScheduled = true;
    setTimeout(() => {
      this.flushScheduled = false;
      this.flushCandidates();
    }, 10);
  }

  private flushCandidates(): void {
    if (this.ended) return;
    while (this.candidates.length > 0 || this.gatheringDone) {
      const candidates = this.candidates.splice(0, MAX_CANDIDATES_PER_FRAME);
      const completed = this.gatheringDone && this.candidates.length === 0;
      const data = { connectionId: this.connectionId, candidates, ...(completed ? { completed: true } : {}) };
      this.sendCandidates(data).catch((error: unknown) => this.host.reportError(error));
      if (completed) {
        this.candidatesMayGo = false;
        return;
      }
    }
  }

  /** Where the local candidates go: the media server (`connection.candidates`), or the other peer. */
  protected sendCandidates(data: SyncRequestDataOf<'connection.candidates'>): Promise<unknown> {
    return this.host.request('connection.candidates', data);
  }

  private startStats(): void {
    if (this.host.statsIntervalMs <= 0 || this.ended) return;
    this.statsTimer = backgroundTimer(() => {
      void this.reportStats().finally(() => this.startStats());
    }, this.host.statsIntervalMs);
  }

  /** Reads `getStats()`, emits the summary and reports it with the `stats` request. */
  async reportStats(): Promise<ConnectionStats | undefined> {
    if (this.ended) return undefined;
    try {
      const now = Date.now();
      const stats = withBitrates(
        summarizeStats(await this.peerConnection.getStats()),
        this.lastStats?.stats,
        now - (this.lastStats?.at ?? now),
      );
      this.lastStats = { stats, at: now };
      this.emit('stats', stats);
      await this.host.request('stats', { connectionId: this.connectionId, stats: { ...stats } });
      return stats;
    } catch (error) {
      this.host.reportError(error);
      return undefined;
    }
  }

  private async reportFailure(): Promise<void> {
    if (this.ended) return;
    for (const state of ['failing', 'failed'] as const) {
      await this.host.request('connection.state', { connectionId: this.connectionId, state }).catch(() => undefined);
    }
    this.end('failed');
  }
}
