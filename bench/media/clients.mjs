// werift WebRTC clients of the media benchmark, on the peer setup of the media tests
// (tools/testing/webrtc-peer.mjs): publishers fed by one shared RTP source (Opus every 20 ms, a VP8
// frame every 50 ms; werift does not encode, Janus only forwards), subscribers counting what they receive.
import { MediaStreamTrack } from 'werift';
import {
  AUDIO_INTERVAL_MS,
  OPUS_FRAME,
  VIDEO_INTERVAL_MS,
  VP8_KEY_FRAME,
  description,
  gathered,
  peerConnection,
  publisherStreams,
} from '../../tools/testing/webrtc-peer.mjs';

export { connected } from '../../tools/testing/webrtc-peer.mjs';

export const AUDIO_PER_SECOND = 1000 / AUDIO_INTERVAL_MS;
export const VIDEO_PER_SECOND = 1000 / VIDEO_INTERVAL_MS;

/** One timer for every publisher: each tick writes the same frame to all their tracks. */
export class RtpSource {
  publishers = new Set();
  sent = { audio: 0, video: 0 };
  #streams = publisherStreams();
  #timers = [];

  start() {
    this.#timers.push(setInterval(() => this.#send('audio', OPUS_FRAME), AUDIO_INTERVAL_MS));
    this.#timers.push(setInterval(() => this.#send('video', VP8_KEY_FRAME), VIDEO_INTERVAL_MS));
  }

  #send(kind, payload) {
    const packet = this.#streams[kind].next(payload);
    for (const publisher of this.publishers) publisher[kind].writeRtp(packet);
    this.sent[kind]++;
  }

  stop() {
    for (const timer of this.#timers) clearInterval(timer);
  }
}

export class Publisher {
  pc = peerConnection();
  audio = new MediaStreamTrack({ kind: 'audio' });
  video = new MediaStreamTrack({ kind: 'video' });

  constructor() {
    this.pc.addTransceiver(this.audio, { direction: 'sendonly' });
    this.pc.addTransceiver(this.video, { direction: 'sendonly' });
  }

  async offer() {
    await this.pc.setLocalDescription(await this.pc.createOffer());
    await gathered(this.pc);
    return description(this.pc);
  }

  close() {
    return this.pc.close();
  }
}

export class Subscriber {
  pc = peerConnection();
  received = { audio: 0, video: 0, firstAt: 0, lastAudioAt: 0 };

  constructor() {
    this.pc.onTrack.subscribe((track) =>
      track.onReceiveRtp.subscribe(() => {
        const now = performance.now();
        if (!this.received.firstAt) this.received.firstAt = now;
        if (track.kind === 'audio') {
          this.received.audio++;
          this.received.lastAudioAt = now;
        } else this.received.video++;
      }),
    );
  }

  async answer(offer) {
    await this.pc.setRemoteDescription(offer);
    await this.pc.setLocalDescription(await this.pc.createAnswer());
    await gathered(this.pc);
    return description(this.pc);
  }

  close() {
    return this.pc.close();
  }
}
