/**
 * What the SDK's Node tests share (`tests/media/sdk*.netns-spec.ts`): the werift configuration for the
 * media namespace, synthetic RTP on a werift track, and RTP counts per kind on an SDK connection.
 */
import { randomInt } from 'node:crypto';
import { MediaStreamTrack, RTCRtpCodecParameters, RtpHeader, RtpPacket } from 'werift';
import type { Connection, MediaTrackLike } from '@switchboard/client';

export const AUDIO_PT = 111;
export const VIDEO_PT = 96;

// werift defaults to a public STUN server and to IPv6: neither exists in the namespace.
export const weriftConfig = {
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
};

/** Synthetic RTP on a werift track (Janus, or the other peer, takes it without decoding). */
export function sendRtp(track: MediaStreamTrack, payloadType: number, step: number, payload: Buffer, everyMs: number) {
  let sequenceNumber = randomInt(0, 0xffff);
  let timestamp = randomInt(0, 0x7fffffff);
  const timer = setInterval(() => {
    const header = new RtpHeader({ payloadType, sequenceNumber, timestamp, marker: true });
    sequenceNumber = (sequenceNumber + 1) & 0xffff;
    timestamp = (timestamp + step) >>> 0;
    track.writeRtp(new RtpPacket(header, payload));
  }, everyMs);
  timer.unref();
  return timer;
}

/** Counts the RTP a connection receives, per kind. */
export function countRtp(connection: Connection) {
  const received = { audio: 0, video: 0 };
  const count = (track: MediaTrackLike) => {
    const remote = track as unknown as MediaStreamTrack;
    remote.onReceiveRtp.subscribe(() => void (received[remote.kind as 'audio' | 'video'] += 1));
  };
  connection.remoteTracks.forEach(count);
  connection.on('track', count);
  return received;
}
