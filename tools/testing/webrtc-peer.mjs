// The werift peer setup shared by the media tests' clients (webrtc-client.ts) and the media
// benchmark's (bench/media/clients.mjs): plain JS, so the benchmark runs without a TypeScript step.
// werift does not encode: publishers send synthetic Opus and VP8 RTP, which Janus forwards as is.
import { randomInt } from 'node:crypto';
import { RTCPeerConnection, RTCRtpCodecParameters, RtpHeader, RtpPacket } from 'werift';

export const AUDIO_PAYLOAD_TYPE = 111;
export const VIDEO_PAYLOAD_TYPE = 96;
export const AUDIO_INTERVAL_MS = 20;
export const VIDEO_INTERVAL_MS = 50;
// A VP8 payload descriptor (start of partition) and a key frame header (640×480), then filler.
export const VP8_KEY_FRAME = Buffer.concat([
  Buffer.from([0x10, 0x50, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0x80, 0x02, 0xe0, 0x01]),
  Buffer.alloc(600, 0x5a),
]);
// One 20 ms Opus frame (any bytes do: Janus forwards without decoding).
export const OPUS_FRAME = Buffer.concat([Buffer.from([0xfc]), Buffer.alloc(60, 0x11)]);

/** A peer connection with Opus and VP8 only, host candidates only. */
export function peerConnection() {
  return new RTCPeerConnection({
    // werift defaults to a public STUN server and to IPv6: neither exists in the media namespace.
    iceServers: [],
    iceUseIpv6: false,
    bundlePolicy: 'max-bundle',
    codecs: {
      audio: [
        new RTCRtpCodecParameters({
          mimeType: 'audio/opus',
          clockRate: 48000,
          channels: 2,
          payloadType: AUDIO_PAYLOAD_TYPE,
        }),
      ],
      video: [
        new RTCRtpCodecParameters({
          mimeType: 'video/VP8',
          clockRate: 90000,
          payloadType: VIDEO_PAYLOAD_TYPE,
          rtcpFeedback: [{ type: 'nack' }, { type: 'nack', parameter: 'pli' }, { type: 'goog-remb' }],
        }),
      ],
    },
  });
}

/** Resolves when ICE gathering is complete. */
export function gathered(pc) {
  if (pc.iceGatheringState === 'complete') return Promise.resolve();
  return new Promise((resolve) => {
    const { unSubscribe } = pc.iceGatheringStateChange.subscribe((state) => {
      if (state !== 'complete') return;
      unSubscribe();
      resolve();
    });
  });
}

/** The local description as signalling carries it. */
export function description(pc) {
  const local = pc.localDescription;
  if (!local) throw new Error('no local description');
  return { type: local.type, sdp: local.sdp };
}

/** Resolves when the peer connection is `connected`; rejects on `failed` or after `timeoutMs`. */
export function connected(pc, timeoutMs = 10000) {
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

/**
 * The packets of one RTP stream: each `next(payload)` advances the sequence number by one and the
 * timestamp by `step` (960 for 20 ms of Opus, 4500 for a 20 fps video frame), from random starts.
 */
export function rtpStream({ payloadType, step, marker = true }) {
  let sequenceNumber = randomInt(0, 0xffff);
  let timestamp = randomInt(0, 0x7fffffff);
  return {
    next(payload) {
      const header = new RtpHeader({ payloadType, sequenceNumber, timestamp, marker });
      sequenceNumber = (sequenceNumber + 1) & 0xffff;
      timestamp = (timestamp + step) >>> 0;
      return new RtpPacket(header, payload);
    },
  };
}

/** The audio and video streams a publisher sends (Opus every 20 ms, a VP8 frame every 50 ms). */
export const publisherStreams = () => ({
  audio: rtpStream({ payloadType: AUDIO_PAYLOAD_TYPE, step: 960 }),
  video: rtpStream({ payloadType: VIDEO_PAYLOAD_TYPE, step: 4500 }),
});
