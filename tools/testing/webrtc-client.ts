import OpusScript from 'opusscript';
import { randomInt } from 'node:crypto';
import { MediaStreamTrack, RtpHeader, RtpPacket, type RTCIceCandidate, type RTCPeerConnection } from 'werift';
import {
  AUDIO_INTERVAL_MS,
  AUDIO_PAYLOAD_TYPE,
  OPUS_FRAME,
  VIDEO_INTERVAL_MS,
  VIDEO_PAYLOAD_TYPE,
  VP8_KEY_FRAME,
  description,
  gathered,
  peerConnection,
  publisherStreams,
  rtpStream,
  type RtpStream,
  type SessionDescription,
} from './webrtc-peer.mjs';

export { connected } from './webrtc-peer.mjs';
export type { SessionDescription } from './webrtc-peer.mjs';

/**
 * WebRTC clients in Node (werift) for the media tests: a publisher that sends synthetic Opus and
 * VP8 RTP (werift does not encode; Janus forwards what it gets), and a subscriber that counts the
 * RTP it receives per kind. Run them in the media network namespace (media-netns.mjs), where
 * 127.0.1.1 on `jn0` is the only address Janus and werift gather on. The peer setup is shared
 * with the media benchmark (webrtc-peer.mjs).
 */

/** Most packets a sender sends at once to catch up with the clock. */
const MAX_CATCH_UP = 5;

export interface Candidate {
  candidate: string;
  sdpMid?: string;
  sdpMLineIndex?: number;
}

/** Sends audio and video RTP, and data channel messages, on one peer connection. */
export class TestPublisher {
  readonly pc = peerConnection();
  /** Its data channel (Janus relays it to the subscribers). */
  readonly data;
  private readonly audio = new MediaStreamTrack({ kind: 'audio' });
  private readonly video = new MediaStreamTrack({ kind: 'video' });
  private timers: NodeJS.Timeout[] = [];
  /** Candidates gathered after the offer was made (trickle). */
  readonly candidates: Candidate[] = [];
  private onCandidate?: (candidate: Candidate | null) => void;

  constructor() {
    this.pc.addTransceiver(this.audio, { direction: 'sendonly' });
    this.pc.addTransceiver(this.video, { direction: 'sendonly' });
    this.data = this.pc.createDataChannel('switchboard');
    this.pc.onIceCandidate.subscribe((candidate?: RTCIceCandidate) => {
      const json = candidate ? (candidate.toJSON() as Candidate) : null;
      if (json) this.candidates.push(json);
      this.onCandidate?.(json);
    });
  }

  /**
   * The offer: with every candidate in it (`trickle: false`), or at once without candidates, which
   * then go to `onCandidate` as they are gathered (null after the last).
   */
  async offer(options: { trickle?: (candidate: Candidate | null) => void } = {}): Promise<SessionDescription> {
    this.onCandidate = options.trickle;
    await this.pc.setLocalDescription(await this.pc.createOffer());
    if (!options.trickle) await gathered(this.pc);
    return description(this.pc);
  }

  async accept(answer: SessionDescription): Promise<void> {
    await this.pc.setRemoteDescription(answer);
  }

  /**
   * Starts sending RTP: Opus every 20 ms (`audioFrames` in a loop, e.g. a real tone from media-opus.ts,
   * else filler bytes), a VP8 frame every 50 ms (`videoFrames` in a loop, each its RTP payloads, e.g. a
   * real picture from media-vp8.ts, else one filler key frame).
   */
  start(options: { audioFrames?: readonly Buffer[]; videoFrames?: readonly Buffer[][] } = {}): void {
    const streams = publisherStreams();
    this.timers.push(sender(this.audio, streams.audio, options.audioFrames ?? [OPUS_FRAME], AUDIO_INTERVAL_MS));
    if (options.videoFrames) this.timers.push(frameSender(this.video, options.videoFrames));
    else this.timers.push(sender(this.video, streams.video, [VP8_KEY_FRAME], VIDEO_INTERVAL_MS));
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    await this.pc.close();
  }
}

function sender(track: MediaStreamTrack, stream: RtpStream, payloads: readonly Buffer[], everyMs: number) {
  let index = 0;
  // Paced by the clock, not by the count of timer turns (which come late on a busy machine): the
  // media's RTP time then follows the wall clock, as a real sender's does (recording durations).
  const startedAt = performance.now();
  const timer = setInterval(() => {
    const due = Math.floor((performance.now() - startedAt) / everyMs) + 1;
    for (let burst = 0; index < due && burst < MAX_CATCH_UP; burst++)
      track.writeRtp(stream.next(payloads[index++ % payloads.length]!));
  }, everyMs);
  timer.unref();
  return timer;
}

/** Sends VP8 frames of several packets each: one RTP timestamp per frame, the marker on its last packet. */
function frameSender(track: MediaStreamTrack, frames: readonly Buffer[][]) {
  let sequenceNumber = randomInt(0, 0xffff);
  const firstTimestamp = randomInt(0, 0x7fffffff);
  let index = 0;
  const startedAt = performance.now();
  const timer = setInterval(() => {
    const due = Math.floor((performance.now() - startedAt) / VIDEO_INTERVAL_MS) + 1;
    for (let burst = 0; index < due && burst < MAX_CATCH_UP; burst++, index++) {
      const payloads = frames[index % frames.length]!;
      const timestamp = (firstTimestamp + index * 90 * VIDEO_INTERVAL_MS) >>> 0;
      payloads.forEach((payload, at) => {
        const marker = at === payloads.length - 1;
        const header = new RtpHeader({ payloadType: VIDEO_PAYLOAD_TYPE, sequenceNumber, timestamp, marker });
        sequenceNumber = (sequenceNumber + 1) & 0xffff;
        track.writeRtp(new RtpPacket(header, payload));
      });
    }
  }, VIDEO_INTERVAL_MS);
  timer.unref();
  return timer;
}

export interface ReceivedCounts {
  audioPackets: number;
  audioBytes: number;
  videoPackets: number;
  videoBytes: number;
  /** Date.now() of the last packet of each kind (0: none yet). */
  lastAudioAt: number;
  lastVideoAt: number;
}

/** Receives one remote publisher's streams, counts their RTP and keeps its data channel messages. */
export class TestSubscriber {
  readonly pc = peerConnection();
  readonly messages: string[] = [];
  private channel?: ReturnType<RTCPeerConnection['createDataChannel']>;
  readonly received: ReceivedCounts = {
    audioPackets: 0,
    audioBytes: 0,
    videoPackets: 0,
    videoBytes: 0,
    lastAudioAt: 0,
    lastVideoAt: 0,
  };

  constructor() {
    this.pc.onDataChannel.subscribe((channel) =>
      channel.onMessage.subscribe((message) => void this.messages.push(message.toString())),
    );
    this.pc.onTrack.subscribe((track) => {
      track.onReceiveRtp.subscribe((rtp) => {
        if (track.kind === 'audio') {
          this.received.audioPackets++;
          this.received.audioBytes += rtp.payload.length;
          this.received.lastAudioAt = Date.now();
        } else if (track.kind === 'video') {
          this.received.videoPackets++;
          this.received.videoBytes += rtp.payload.length;
          this.received.lastVideoAt = Date.now();
        }
      });
    });
  }

  /** Answers the media server's offer (every candidate in the answer). */
  async answer(offer: SessionDescription): Promise<SessionDescription> {
    await this.pc.setRemoteDescription(offer);
    // Janus relays a publisher's data to a subscriber only once the subscriber opened a channel (as janus.js does).
    if (!this.channel && offer.sdp.includes('m=application')) this.channel = this.pc.createDataChannel('switchboard');
    await this.pc.setLocalDescription(await this.pc.createAnswer());
    await gathered(this.pc);
    return description(this.pc);
  }

  snapshot(): ReceivedCounts {
    return { ...this.received };
  }

  async close(): Promise<void> {
    await this.pc.close();
  }
}

/**
 * An AudioBridge (`mcu`) participant: sends Opus frames (real ones: Janus decodes them to mix) on
 * one send-receive audio track and counts the mixed audio it receives.
 */
export class TestMixerParticipant {
  readonly pc = peerConnection();
  private readonly audio = new MediaStreamTrack({ kind: 'audio' });
  private timer?: NodeJS.Timeout;
  private readonly decoder = new OpusScript(48000, 1);
  /** `squares` and `samples`: the decoded mix, for its level (`rms`). */
  readonly received = { audioPackets: 0, audioBytes: 0, lastAudioAt: 0, squares: 0, samples: 0 };

  constructor() {
    this.pc.addTransceiver(this.audio, { direction: 'sendrecv' });
    this.pc.onTrack.subscribe((track) =>
      track.onReceiveRtp.subscribe((rtp) => {
        this.received.audioPackets++;
        this.received.audioBytes += rtp.payload.length;
        this.received.lastAudioAt = Date.now();
        const pcm = this.decoder.decode(rtp.payload);
        for (let offset = 0; offset + 1 < pcm.length; offset += 2)
          this.received.squares += pcm.readInt16LE(offset) ** 2;
        this.received.samples += pcm.length / 2;
      }),
    );
  }

  /** The level (RMS of 16-bit samples) of the mix received since `since` (an earlier `received` copy). */
  rmsSince(since: { squares: number; samples: number }): number {
    const samples = this.received.samples - since.samples;
    return samples ? Math.sqrt((this.received.squares - since.squares) / samples) : 0;
  }

  /** The offer, with every candidate in it. */
  async offer(): Promise<SessionDescription> {
    await this.pc.setLocalDescription(await this.pc.createOffer());
    await gathered(this.pc);
    return description(this.pc);
  }

  async accept(answer: SessionDescription): Promise<void> {
    await this.pc.setRemoteDescription(answer);
  }

  /** Sends `frames` in a loop, one every 20 ms. */
  start(frames: readonly Buffer[]): void {
    let index = 0;
    const stream = rtpStream({ payloadType: AUDIO_PAYLOAD_TYPE, step: 960, marker: false });
    this.timer = setInterval(
      () => this.audio.writeRtp(stream.next(frames[index++ % frames.length]!)),
      AUDIO_INTERVAL_MS,
    );
    this.timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.decoder.delete();
    await this.pc.close();
  }
}
