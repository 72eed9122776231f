import type { MediaStreamStats } from '@switchboard/contracts';
import { agentConnectionStats, agentTransport } from './agent-stats.js';

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

  it("reads Janus's selected pair as the client's transport", () => {
    const selectedPair = '127.0.1.1:40012 [host,udp] <-> 10.9.8.7:53211 [relay,udp]';
    expect(agentTransport({ ...base, selectedPair })).toEqual({
      id: 'cn:transport',
      protocol: 'udp',
      localAddress: '10.9.8.7:53211',
      remoteAddress: '127.0.1.1:40012',
      relayed: true,
      state: 'connected',
    });
    const ipv6 = agentTransport({
      ...base,
      connected: false,
      selectedPair: 'fe80::1:4000 [host,tcp] <-> ::1:5000 [prflx,tcp]',
    });
    expect(ipv6).toMatchObject({ protocol: 'tcp', localAddress: '::1:5000', relayed: false, state: 'disconnected' });
    for (const selectedPair of [undefined, 'no pair yet'])
      expect(agentTransport({ ...base, ...(selectedPair ? { selectedPair } : {}) })).toBeNull();
  });
});
