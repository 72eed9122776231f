import { ConnectionStatsStore, MAX_SAMPLE_AGE_MS, MAX_SAMPLES, type ConnectionKey } from './connection-stats.js';

const KEY: ConnectionKey = ['app', 'lobby', 'alice', 'laptop', 'alice-1', 'cn-1'];

function statsEvent(stats: Record<string, unknown> | null, connectionId = 'cn-1') {
  return {
    applicationId: 'app',
    event: {
      channel: { id: 'lobby' },
      client: { id: 'alice-1', userId: 'alice', deviceId: 'laptop' },
      connection: { id: connectionId, stats },
    },
  };
}

describe('connection stats store', () => {
  it('keeps the charted numbers of each sample of one connection, oldest first', () => {
    const store = new ConnectionStatsStore(() => 10_000);
    store.record(statsEvent({ timestamp: 9_000, roundTripTime: 40, jitter: 'x', bytesSent: 5 }));
    store.record(statsEvent({ timestamp: 9_500, roundTripTime: 42, sendBitrate: 800 }));
    store.record(statsEvent({ timestamp: 9_600, roundTripTime: 7 }, 'cn-2'));
    store.record(statsEvent(null));
    expect(store.samplesOf(KEY)).toEqual([
      expect.objectContaining({ timestamp: 9_000, roundTripTime: 40, jitter: null, sendBitrate: null }),
      expect.objectContaining({ timestamp: 9_500, roundTripTime: 42, sendBitrate: 800 }),
    ]);
    expect(store.samplesOf(KEY)[0]).not.toHaveProperty('bytesSent');
  });

  it('bounds what it keeps: samples per connection and their age', () => {
    let now = 1_000_000;
    const store = new ConnectionStatsStore(() => now);
    for (let index = 0; index < MAX_SAMPLES + 5; index++) store.record(statsEvent({ timestamp: now + index }));
    expect(store.samplesOf(KEY)).toHaveLength(MAX_SAMPLES);
    expect(store.samplesOf(KEY)[0]!.timestamp).toBe(now + 5);
    now += MAX_SAMPLE_AGE_MS + MAX_SAMPLES + 10;
    expect(store.samplesOf(KEY)).toEqual([]);
  });
});
