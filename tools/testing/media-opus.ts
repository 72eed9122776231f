import { execFileSync } from 'node:child_process';

/**
 * Real Opus frames (20 ms, 48 kHz) of a tone, encoded once by ffmpeg: the AudioBridge decodes what
 * it mixes, so its participants must send real Opus (the SFU tests send any bytes).
 */
export function opusToneFrames(seconds = 2, frequency = 440): Buffer[] {
  const ogg = execFileSync(
    'ffmpeg',
    ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i']
      .concat(`sine=frequency=${frequency}:sample_rate=48000:duration=${seconds}`)
      .concat(['-c:a', 'libopus', '-b:a', '64k', '-frame_duration', '20', '-f', 'ogg', 'pipe:1']),
    { maxBuffer: 64 * 1024 * 1024 },
  );
  // The first two packets are the OpusHead and OpusTags headers.
  return oggPackets(ogg).slice(2);
}

/** The packets of an Ogg stream (RFC 3533): each page's segments, joined across lacing values of 255. */
function oggPackets(ogg: Buffer): Buffer[] {
  const packets: Buffer[] = [];
  let pending: Buffer[] = [];
  let offset = 0;
  while (offset + 27 <= ogg.length && ogg.toString('latin1', offset, offset + 4) === 'OggS') {
    const segments = ogg[offset + 26]!;
    const lacing = ogg.subarray(offset + 27, offset + 27 + segments);
    let body = offset + 27 + segments;
    for (const length of lacing) {
      pending.push(ogg.subarray(body, body + length));
      body += length;
      if (length < 255) {
        packets.push(Buffer.concat(pending));
        pending = [];
      }
    }
    offset = body;
  }
  return packets;
}
