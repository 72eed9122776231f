import type { MediaStreamStats } from '@switchboard/contracts';
import { agentConnectionStats } from './agent-stats.js';

const stream = (extra: Partial<MediaStreamStats> = {}): MediaStreamStats => ({
  packetsReceived: 100,
  bytesReceived: 10_000,
  packetsSent: 50,
  bytesSent: 5_000,
  bitrateReceived: 32_000,
  bitrateSent: 16_000,
  packetsLost: 2,
  packetsLostByRemote: 1,
  jitterMs: 4,
  jitterRemoteMs: 6,
  nacksReceived: 0,
  nacksSent: 0,
  ...extra,
});

const base = {
  kind: 'connection.stats' as const,
  applicationId: 'a',
  channelId: 'ch',
  connectionId: 'cn',
  role: 'publisher' as const,
  connected: true,
};

describe('agentConnectionStats', () => {
  it('turns what Janus received into what the client sent, summing audio and video', () => {
    const stats = agentConnectionStats({ ...base, audio: stream(), video: stream({ rttMs: 30, jitterMs: 9 }) }, 1234);
    expect(stats).toEqual({
      timestamp: 1234,
      bytesSent: 20_000,
      bytesReceived: 10_000,
      packetsSent: 200,
      packetsReceived: 100,
      packetsLost: 6,
      jitter: 9,
      roundTripTime: 30,
      sendBitrate: 64_000,
      receiveBitrate: 32_000,
      frameWidth: null,
      frameHeight: null,
      frameRate: null,
    });
  });

  it('has zeros for a connection without media yet, and no jitter or round trip to report', () => {
    const stats = agentConnectionStats({ ...base, connected: false }, 5);
    expect(stats).toMatchObject({ bytesSent: 0, bytesReceived: 0, jitter: null, roundTripTime: null });
  });
});
