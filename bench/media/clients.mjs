// werift WebRTC clients of the media benchmark (the same arrangement as tools/testing/webrtc-client.ts,
// in plain JS for a benchmark that runs without a TypeScript step): publishers fed by one shared RTP
// source (Opus every 20 ms, a VP8 frame every 50 ms; werift does not encode, Janus only forwards),
// subscribers counting what they receive.
import { randomInt } from 'node:crypto';
import { MediaStreamTrack, RTCPeerConnection, RTCRtpCodecParameters, RtpHeader, RtpPacket } from 'werift';

const AUDIO_PT = 111;
const VIDEO_PT = 96;
export const AUDIO_PER_SECOND = 50;
export const VIDEO_PER_SECOND = 20;
const VP8_FRAME = Buffer.concat([
  Buffer.from([0x10, 0x50, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0x80, 0x02, 0xe0, 0x01]),
  Buffer.alloc(1000, 0x5a),
]);
const OPUS_FRAME = Buffer.concat([Buffer.from([0xfc]), Buffer.alloc(80, 0x11)]);

function peerConnection() {
  return new RTCPeerConnection({
    iceServers: [],
    iceUseIpv6: false,
    bundlePolicy: 'max-bundle',
    codecs: {
      audio: [
        new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2, payloadType: AUDIO_PT }),
      ],
      video: [
        new RTCRtpCodecParameters({
          mimeType: 'video/VP8',
          clockRate: 90000,
          payloadType: VIDEO_PT,
          rtcpFeedback: [{ type: 'nack' }, { type: 'nack', parameter: 'pli' }],
        }),
      ],
    },
  });
}

function gathered(pc) {
  if (pc.iceGatheringState === 'complete') return Promise.resolve();
  return new Promise((resolve) => {
    const { unSubscribe } = pc.iceGatheringStateChange.subscribe((state) => {
      if (state === 'complete') {
        unSubscribe();
        resolve();
      }
    });
  });
}

export function connected(pc, timeoutMs = 15000) {
  if (pc.connectionState === 'connected') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not connected within ${timeoutMs} ms`)), timeoutMs);
    const { unSubscribe } = pc.connectionStateChange.subscribe((state) => {
      if (state !== 'connected' && state !== 'failed') return;
      clearTimeout(timer);
      unSubscribe();
      if (state === 'connected') resolve();
      else reject(new Error('peer connection failed'));
    });
  });
}

const local = (pc) => ({ type: pc.localDescription.type, sdp: pc.localDescription.sdp });

/** One timer for every publisher: each tick writes the same frame to all their tracks. */
export class RtpSource {
  publishers = new Set();
  sent = { audio: 0, video: 0 };
  #seq = { audio: randomInt(0, 0xffff), video: randomInt(0, 0xffff) };
  #ts = { audio: randomInt(0, 2 ** 31), video: randomInt(0, 2 ** 31) };
  #timers = [];

  start() {
    this.#timers.push(setInterval(() => this.#send('audio', AUDIO_PT, 960, OPUS_FRAME), 1000 / AUDIO_PER_SECOND));
    this.#timers.push(setInterval(() => this.#send('video', VIDEO_PT, 4500, VP8_FRAME), 1000 / VIDEO_PER_SECOND));
  }

  #send(kind, payloadType, step, payload) {
    const header = new RtpHeader({
      payloadType,
      sequenceNumber: this.#seq[kind],
      timestamp: this.#ts[kind],
      marker: true,
    });
    this.#seq[kind] = (this.#seq[kind] + 1) & 0xffff;
    this.#ts[kind] = (this.#ts[kind] + step) >>> 0;
    const packet = new RtpPacket(header, payload);
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
    return local(this.pc);
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
    return local(this.pc);
  }

  close() {
    return this.pc.close();
  }
}
