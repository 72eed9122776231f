import { execFileSync } from 'node:child_process';

/** Largest VP8 payload of one RTP packet (below the path MTU with headers and SRTP). */
const MAX_PAYLOAD = 1100;

/**
 * Real VP8 frames of a test pattern (ffmpeg `testsrc`, 20 fps, a key frame every second), each
 * split into RTP payloads (RFC 7741: a one-byte descriptor, S bit on a frame's first packet): a
 * recording then decodes to a picture, not to black.
 */
export function vp8TestFrames(seconds = 2, size = '320x240'): Buffer[][] {
  const ivf = execFileSync(
    'ffmpeg',
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-f',
      'lavfi',
      '-i',
      `testsrc=size=${size}:rate=20:duration=${seconds}`,
    ].concat(['-c:v', 'libvpx', '-b:v', '300k', '-g', '20', '-deadline', 'realtime', '-f', 'ivf', 'pipe:1']),
    { maxBuffer: 64 * 1024 * 1024 },
  );
  return ivfFrames(ivf).map(packetize);
}

/** The frames of an IVF file: a 32-byte header, then per frame a 12-byte header (size, timestamp). */
function ivfFrames(ivf: Buffer): Buffer[] {
  const frames: Buffer[] = [];
  let offset = ivf.readUInt16LE(6);
  while (offset + 12 <= ivf.length) {
    const size = ivf.readUInt32LE(offset);
    frames.push(ivf.subarray(offset + 12, offset + 12 + size));
    offset += 12 + size;
  }
  return frames;
}

function packetize(frame: Buffer): Buffer[] {
  const payloads: Buffer[] = [];
  for (let offset = 0; offset < frame.length; offset += MAX_PAYLOAD) {
    const descriptor = Buffer.from([offset === 0 ? 0x10 : 0x00]);
    payloads.push(Buffer.concat([descriptor, frame.subarray(offset, offset + MAX_PAYLOAD)]));
  }
  return payloads;
}
