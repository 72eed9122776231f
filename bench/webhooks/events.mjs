// The events the bench publishes, and the percentile of a sorted list of latencies.
import { randomUUID } from 'node:crypto';
import { APP, CHANNELS } from './options.mjs';

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export function eventInfo(i) {
  const channelId = `room-${i % CHANNELS}`;
  return {
    id: randomUUID(),
    timestamp: Date.now(),
    origin: 'client',
    type: 'channel.client.joined',
    forced: false,
    channel: { id: channelId, applicationId: APP, channelRecording: null },
    client: {
      id: `client-${i}`,
      userId: `user-${i % 1000}`,
      userAlias: null,
      deviceId: 'device-1',
      deviceAlias: null,
      tag: null,
      roles: [],
      applicationId: APP,
      stats: null,
    },
    connection: null,
    message: null,
  };
}
