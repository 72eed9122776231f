import type { EffectiveSettings, RemoteUpstream, SyncStreams } from '@switchboard/contracts';
import { Connection, type ConnectionHost } from './connection.js';
import { SyncError } from './errors.js';
import type { DataChannelLike, MediaTrackLike } from './platform.js';

type Kind = 'audio' | 'video';
const KINDS: readonly Kind[] = ['audio', 'video'];
const MUTED = { audio: 'audioMuted', video: 'videoMuted' } as const;
const UNMUTE_DISABLED = { audio: 'audioUnmuteDisabled', video: 'videoUnmuteDisabled' } as const;
const UPDATE_FIELD = { audio: 'localAudioMuted', video: 'localVideoMuted' } as const;

export interface LocalMediaOptions {
  /** Chosen by the SDK (a UUID) when absent. */
  connectionId?: string;
  tag?: string | null;
  audioMuted?: boolean;
  videoMuted?: boolean;
}

/** @internal A connection that sends local tracks: server mutes are applied to them. */
export abstract class LocalMediaConnection extends Connection {
  readonly muted = { audio: false, video: false };

  protected constructor(
    host: ConnectionHost,
    connectionId: string,
    channelId: string,
    readonly tracks: { audio?: MediaTrackLike; video?: MediaTrackLike },
    options: LocalMediaOptions,
  ) {
    super(host, connectionId, channelId);
    for (const kind of KINDS) this.setTrackMuted(kind, options[MUTED[kind]] ?? false);
  }

  /** Whether an operator disabled unmuting `kind` while it is muted (a local unmute is then refused). */
  unmuteRefused(kind: Kind): boolean {
    const settings = this.settings;
    return !!settings?.[UNMUTE_DISABLED[kind]] && (this.muted[kind] || settings[MUTED[kind]]);
  }

  setAudioMuted(muted: boolean): Promise<void> {
    return this.setMuted('audio', muted);
  }

  setVideoMuted(muted: boolean): Promise<void> {
    return this.setMuted('video', muted);
  }

  /** Mutes or unmutes a local track and tells the server; unmuting is refused (`UnmuteDisabled`) while disabled. */
  async setMuted(kind: Kind, muted: boolean): Promise<void> {
    const field = UPDATE_FIELD[kind];
    if (!muted && this.unmuteRefused(kind)) {
      throw new SyncError('connection.update', {
        code: 'UnmuteDisabled',
        message: `An operator disabled unmuting ${kind}.`,
        details: [{ field, message: 'unmuting is disabled' }],
      });
    }
    const before = this.muted[kind];
    this.setTrackMuted(kind, muted);
    try {
      await this.host.request('connection.update', { connectionId: this.connectionId, [field]: muted });
    } catch (error) {
      this.setTrackMuted(kind, before);
      throw error;
    }
    this.emit('mute', { kind, muted, byServer: false, unmuteDisabled: this.unmuteRefused(kind) });
  }

  protected streamsFor(direction: 'sendonly' | 'sendrecv', withVideo: boolean): SyncStreams {
    const stream = (kind: Kind) => (this.tracks[kind] ? { direction, muted: this.muted[kind] } : null);
    return { audio: stream('audio'), video: withVideo ? stream('video') : null };
  }

  protected addTracks(direction: 'sendonly' | 'sendrecv'): void {
    for (const kind of KINDS) {
      const track = this.tracks[kind];
      if (track) this.peerConnection.addTransceiver(track, { direction });
    }
  }

  /** Sends the offer (pipelined behind the open) and applies the media server's answer. */
  protected async offerAndAccept(): Promise<void> {
    const offer = await this.localDescription();
    const answered = this.host.request('connection.offer', {
      connectionId: this.connectionId,
      offer: { type: 'offer', sdp: offer.sdp },
    });
    this.signalled();
    const { answer } = await answered;
    await this.peerConnection.setRemoteDescription(answer);
  }

  // An operator's mute (or its end) is applied to the track at once, whatever the app said before.
  protected override settingsChanged(previous: EffectiveSettings | null, settings: EffectiveSettings): void {
    for (const kind of KINDS) {
      const serverMuted = settings[MUTED[kind]];
      if (serverMuted === (previous?.[MUTED[kind]] ?? false)) continue;
      this.setTrackMuted(kind, serverMuted);
      this.emit('mute', { kind, muted: serverMuted, byServer: true, unmuteDisabled: this.unmuteRefused(kind) });
    }
  }

  private setTrackMuted(kind: Kind, muted: boolean): void {
    this.muted[kind] = muted;
    const track = this.tracks[kind];
    if (track) track.enabled = !muted;
  }
}

export interface PublishOptions extends LocalMediaOptions {
  audio?: MediaTrackLike;
  video?: MediaTrackLike;
  /** A data channel: true for the label `switchboard`, or its label. */
  data?: boolean | string;
}

/** An upstream `sfu` connection: publishes local tracks (and a data channel) to the channel. */
export class UpstreamConnection extends LocalMediaConnection {
  readonly direction = 'upstream';
  readonly dataChannel?: DataChannelLike;

  constructor(
    host: ConnectionHost,
    connectionId: string,
    channelId: string,
    private readonly options: PublishOptions,
  ) {
    super(host, connectionId, channelId, { audio: options.audio, video: options.video }, options);
    this.addTracks('sendonly');
    if (options.data)
      this.dataChannel = this.peerConnection.createDataChannel(
        typeof options.data === 'string' ? options.data : 'switchboard',
      ) as DataChannelLike;
  }

  /** @internal What publishes the same tracks again on a new connection (a session that could not be resumed). */
  republishOptions(): PublishOptions {
    const { connectionId: _previous, ...options } = this.options;
    return { ...options, audioMuted: this.muted.audio, videoMuted: this.muted.video };
  }

  /** @internal Offer → `connection.offer` → the media server's answer; candidates trickle after it. */
  async start(tag: string | null | undefined): Promise<void> {
    await this.peerConnection.setLocalDescription(await this.peerConnection.createOffer());
    const streams = this.streamsFor('sendonly', true);
    if (this.dataChannel) streams.data = { direction: 'sendrecv' };
    await this.openWith({ type: 'sfu', tag: tag ?? null, streams }, () => this.offerAndAccept());
  }
}

/** An `mcu` connection: joins the channel's audio mix (sends the local audio, receives the others' mix). */
export class MixerConnection extends LocalMediaConnection {
  readonly direction = 'mixer';

  constructor(
    host: ConnectionHost,
    connectionId: string,
    channelId: string,
    private readonly options: LocalMediaOptions & { audio: MediaTrackLike },
  ) {
    super(host, connectionId, channelId, { audio: options.audio }, options);
    this.addTracks('sendrecv');
  }

  /** @internal */
  republishOptions(): LocalMediaOptions & { audio: MediaTrackLike } {
    const { connectionId: _previous, ...options } = this.options;
    return { ...options, audioMuted: this.muted.audio };
  }

  /** @internal */
  async start(tag: string | null | undefined): Promise<void> {
    await this.peerConnection.setLocalDescription(await this.peerConnection.createOffer());
    const streams = this.streamsFor('sendrecv', false);
    await this.openWith({ type: 'mcu', tag: tag ?? null, streams }, () => this.offerAndAccept());
  }
}

/** What a downstream connection receives: a remote upstream (as pushed) or just its connection id. */
export type RemoteUpstreamRef =
  RemoteUpstream | { connectionId: string; audio?: boolean; video?: boolean; data?: boolean };

/** A downstream `sfu` connection: receives one remote upstream; the media server offers, the SDK answers. */
export class DownstreamConnection extends Connection {
  readonly direction = 'downstream';
  dataChannel?: DataChannelLike;
  private negotiation: Promise<void> = Promise.resolve();

  constructor(
    host: ConnectionHost,
    connectionId: string,
    channelId: string,
    readonly remote: RemoteUpstreamRef,
  ) {
    super(host, connectionId, channelId);
  }

  /** @internal `connection.subscribe` → the media server's offer → `connection.answer`. */
  async start(tag: string | null | undefined): Promise<void> {
    const receive = (has: boolean | undefined) => (has === false ? null : { direction: 'recvonly' as const });
    const streams = {
      audio: receive(this.remote.audio),
      video: receive(this.remote.video),
      data: receive(this.remote.data),
    };
    await this.openWith(
      { type: 'sfu', tag: tag ?? null, remoteConnectionId: this.remote.connectionId, streams },
      async () => {
        const { offer } = await this.host.request('connection.subscribe', { connectionId: this.connectionId });
        await this.answer(offer);
      },
    );
  }

  /** @internal The media server renegotiates (its upstream's streams changed): answered in turn. */
  override renegotiate(offer: { type: 'offer'; sdp: string }): Promise<void> {
    this.negotiation = this.negotiation
      .then(() => this.answer(offer))
      .catch((error: unknown) => {
        this.host.reportError(error);
      });
    return this.negotiation;
  }

  private async answer(offer: { type: 'offer'; sdp: string }): Promise<void> {
    const pc = this.peerConnection;
    await pc.setRemoteDescription(offer);
    // Janus relays a publisher's data to a subscriber once the subscriber opened a channel too.
    if (!this.dataChannel && offer.sdp.includes('m=application'))
      this.dataChannel = pc.createDataChannel('switchboard') as DataChannelLike;
    await pc.setLocalDescription(await pc.createAnswer());
    const answer = await this.localDescription();
    const answered = this.host.request('connection.answer', {
      connectionId: this.connectionId,
      answer: { type: 'answer', sdp: answer.sdp },
    });
    this.signalled();
    await answered;
  }
}
