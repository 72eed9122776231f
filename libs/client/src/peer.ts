import type { SyncRequestDataOf, SyncStreams } from '@switchboard/contracts';
import type { ConnectionHost, RelayedSignal } from './connection.js';
import { LocalMediaConnection, type LocalMediaOptions } from './connections.js';
import { ClientError, SyncError } from './errors.js';
import { backgroundTimer, type DataChannelLike, type IceCandidateInit, type MediaTrackLike } from './platform.js';

export interface PeerOptions extends LocalMediaOptions {
  audio?: MediaTrackLike;
  video?: MediaTrackLike;
  /** A data channel (true: the label `switchboard`): the offering side opens it, the other gets it. */
  data?: boolean | string;
  /** How long to wait for the other side to open its peer connection and answer (default 30 s). */
  waitMs?: number;
}

type Description = { type: 'offer' | 'answer'; sdp: string };
type Signal = Omit<SyncRequestDataOf<'connection.relay'>, 'connectionId'>;

const KINDS = ['audio', 'video'] as const;
// The other side may open its peer connection after this one: the first offer is tried again.
const RELAY_RETRY_MS = 250;

/**
 * A `peer` connection: media straight to one other client, its signalling relayed by the server
 * (`connection.relay` → `connection.relayed`). The side whose connection id sorts first offers;
 * the other is "polite" on an offer collision (it rolls its own offer back and offers again after).
 */
export class PeerConnection extends LocalMediaConnection {
  readonly direction = 'peer';
  /** This side sends the first offer (its connection id sorts before the remote's). */
  readonly offerer: boolean;
  dataChannel?: DataChannelLike;
  private signals: Promise<void> = Promise.resolve();
  private readonly pendingCandidates: IceCandidateInit[] = [];
  private remoteDescribed = false;
  private readonly attached = new Set<MediaTrackLike>();
  // Offer once the current answer is sent: this side's offer was rolled back, or it added a data channel.
  private offerAfterAnswer = false;
  private readonly firstExchange = deferred();
  private exchanged = false;

  constructor(
    host: ConnectionHost,
    connectionId: string,
    channelId: string,
    readonly remoteConnectionId: string,
    private readonly options: PeerOptions,
  ) {
    super(host, connectionId, channelId, { audio: options.audio, video: options.video }, options);
    this.offerer = connectionId < remoteConnectionId;
    this.on('datachannel', (channel) => (this.dataChannel ??= channel));
    const pc = this.peerConnection;
    const reportFailure = pc.onconnectionstatechange;
    pc.onconnectionstatechange = (event: unknown) => {
      reportFailure?.(event);
      this.mediaStateChanged(pc.connectionState);
    };
  }

  /** @internal Opens the connection, then the first offer and answer (resolves once exchanged). */
  async start(tag: string | null | undefined): Promise<void> {
    const stream = (kind: 'audio' | 'video') =>
      this.tracks[kind]
        ? { direction: 'sendrecv' as const, muted: this.muted[kind] }
        : { direction: 'recvonly' as const };
    const streams: SyncStreams = { audio: stream('audio'), video: stream('video') };
    if (this.options.data) streams.data = { direction: 'sendrecv' };
    if (this.offerer) {
      this.attachLocalTracks();
      // Offered in both directions, whatever this side sends: the other side may send it.
      for (const kind of KINDS)
        if (!this.tracks[kind]) this.peerConnection.addTransceiver(kind, { direction: 'recvonly' });
      if (this.options.data) this.openDataChannel();
    }
    const open = { type: 'peer' as const, tag: tag ?? null, remoteConnectionId: this.remoteConnectionId, streams };
    await this.openWith(open, () => this.exchange());
  }

  /** Sends a new offer (after adding a track or a data channel to `peerConnection`); answered in turn. */
  negotiate(): Promise<void> {
    return this.enqueue(() => this.offer());
  }

  /** @internal */
  override relayed(push: RelayedSignal): void {
    this.enqueue(() => this.apply(push)).catch((error: unknown) => this.signallingFailed(error));
  }

  protected override sendCandidates(data: SyncRequestDataOf<'connection.candidates'>): Promise<unknown> {
    return this.host.request('connection.relay', data);
  }

  private exchange(): Promise<void> {
    const waitMs = this.options.waitMs ?? 30000;
    const timer = backgroundTimer(() => {
      const waiting = this.offerer ? 'open its connection and answer' : 'offer';
      this.firstExchange.reject(
        new ClientError('RequestTimeout', `peer ${this.remoteConnectionId} did not ${waiting} within ${waitMs} ms`),
      );
    }, waitMs);
    if (this.offerer)
      this.enqueue(() => this.offer(Date.now() + waitMs)).catch((error: unknown) => this.signallingFailed(error));
    return this.firstExchange.promise.finally(() => clearTimeout(timer));
  }

  // Before the first exchange went through, openPeer rejects with it; after, it is a background error.
  private signallingFailed(error: unknown): void {
    if (this.exchanged) this.host.reportError(error);
    else this.firstExchange.reject(error);
  }

  private exchangeDone(): void {
    this.exchanged = true;
    this.firstExchange.resolve();
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    const next = this.signals.then(step);
    this.signals = next.catch(() => undefined);
    return next;
  }

  private async offer(retryUntil?: number): Promise<void> {
    if (this.ended) return;
    await this.peerConnection.setLocalDescription(await this.peerConnection.createOffer());
    const offer = await this.localDescription();
    await this.relay({ offer: { type: 'offer', sdp: offer.sdp } }, retryUntil);
    this.signalled();
  }

  private async apply(push: RelayedSignal): Promise<void> {
    if (this.ended) return;
    const pc = this.peerConnection;
    if (push.offer) {
      const collision = (pc.signalingState ?? 'stable') !== 'stable';
      // On a collision the impolite side (the first offerer) keeps its offer: the other answers it.
      if (collision && this.offerer) return;
      if (collision) {
        await pc.setLocalDescription({ type: 'rollback' });
        this.offerAfterAnswer = true;
      }
      await this.describeRemote(push.offer as Description);
      this.attachLocalTracks();
      if (this.options.data && !this.dataChannel && !push.offer.sdp.includes('m=application')) this.openDataChannel();
      await pc.setLocalDescription(await pc.createAnswer());
      const answer = await this.localDescription();
      const sent = this.relay({ answer: { type: 'answer', sdp: answer.sdp } });
      this.signalled();
      await sent;
      this.exchangeDone();
      if (this.offerAfterAnswer) {
        this.offerAfterAnswer = false;
        this.negotiate().catch((error: unknown) => this.host.reportError(error));
      }
    } else if (push.answer) {
      if (pc.signalingState !== undefined && pc.signalingState !== 'have-local-offer') return;
      await this.describeRemote(push.answer as Description);
      this.exchangeDone();
    } else if (push.candidates) {
      for (const candidate of push.candidates) await this.addCandidate(candidate as IceCandidateInit);
    }
  }

  private async describeRemote(description: Description): Promise<void> {
    await this.peerConnection.setRemoteDescription(description);
    this.remoteDescribed = true;
    for (const candidate of this.pendingCandidates.splice(0)) await this.addCandidate(candidate);
  }

  // Candidates may overtake the description they belong to (relays travel independently).
  private async addCandidate(candidate: IceCandidateInit): Promise<void> {
    if (!this.remoteDescribed) this.pendingCandidates.push(candidate);
    else await this.peerConnection.addIceCandidate?.(candidate);
  }

  private async relay(signal: Signal, retryUntil?: number): Promise<void> {
    for (;;) {
      try {
        await this.host.request('connection.relay', { connectionId: this.connectionId, ...signal });
        return;
      } catch (error) {
        const notOpenYet = error instanceof SyncError && error.code === 'NotFound';
        if (!notOpenYet || retryUntil === undefined || Date.now() >= retryUntil || this.ended) throw error;
        await new Promise((resolve) => backgroundTimer(() => resolve(undefined), RELAY_RETRY_MS));
      }
    }
  }

  /** Local tracks not sent yet: on the answering side, into the transceivers of the remote offer. */
  private attachLocalTracks(): void {
    for (const kind of KINDS) {
      const track = this.tracks[kind];
      if (!track || this.attached.has(track)) continue;
      this.attached.add(track);
      const pc = this.peerConnection;
      if (pc.addTrack) pc.addTrack(track);
      else pc.addTransceiver(track, { direction: 'sendrecv' });
    }
  }

  private openDataChannel(): void {
    const label = typeof this.options.data === 'string' ? this.options.data : 'switchboard';
    this.dataChannel = this.peerConnection.createDataChannel(label) as DataChannelLike;
    this.offerAfterAnswer = !this.offerer;
  }

  // No media server reports this connection's media: the client does (`connected`, or the other side closed).
  private mediaStateChanged(state: string): void {
    if (this.ended) return;
    if (state === 'connected' && (this.state === 'new' || this.state === 'connecting')) {
      this.applyState('connected');
      this.host
        .request('connection.state', { connectionId: this.connectionId, state: 'connected' })
        .catch((error: unknown) => this.host.reportError(error));
    } else if (state === 'closed') {
      this.end('remote-left');
      this.host
        .request('connection.close', { connectionId: this.connectionId })
        .catch((error: unknown) => this.host.reportError(error));
    }
  }
}

function deferred(): { promise: Promise<void>; resolve(): void; reject(error: unknown): void } {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((ok, fail) => ((resolve = ok), (reject = fail)));
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}
