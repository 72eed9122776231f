import { connect, type NatsConnection } from '@nats-io/transport-node';

/** One stats sample of a connection, as the runtime's `connection.stats` events carry it (MediaStats). */
export interface StatsSample {
  timestamp: number;
  sendBitrate: number | null;
  receiveBitrate: number | null;
  packetsReceived: number | null;
  packetsLost: number | null;
  jitter: number | null;
  roundTripTime: number | null;
}

/** What identifies a connection on interface A: application, channel, user, device, client, connection. */
export type ConnectionKey = readonly [string, string, string, string, string, string];

const SAMPLE_FIELDS = ['sendBitrate', 'receiveBitrate', 'packetsReceived', 'packetsLost', 'jitter', 'roundTripTime'];
/** Bounds of what is kept in memory: samples per connection, connections, and age of a sample. */
export const MAX_SAMPLES = 300;
export const MAX_CONNECTIONS = 5000;
export const MAX_SAMPLE_AGE_MS = 15 * 60_000;

const keyText = (key: ConnectionKey) => JSON.stringify(key);
const numberOrNull = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : null);

interface StatsEvent {
  event?: {
    channel?: { id?: string } | null;
    client?: { id?: string; userId?: string; deviceId?: string } | null;
    connection?: { id?: string; stats?: Record<string, unknown> | null } | null;
  };
  applicationId?: string;
}

/** The recent stats samples of every live connection, fed by the runtime's `connection.stats` events. */
export class ConnectionStatsStore {
  private readonly samples = new Map<string, StatsSample[]>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Keeps the sample of one `connection.stats` domain event; anything else is ignored. */
  record(domainEvent: StatsEvent): void {
    const { channel, client, connection } = domainEvent.event ?? {};
    const stats = connection?.stats;
    const parts = [
      domainEvent.applicationId,
      channel?.id,
      client?.userId,
      client?.deviceId,
      client?.id,
      connection?.id,
    ];
    if (!stats || parts.some((part) => typeof part !== 'string')) return;
    const sample = { timestamp: numberOrNull(stats.timestamp) ?? this.now() } as StatsSample;
    for (const field of SAMPLE_FIELDS)
      (sample as unknown as Record<string, unknown>)[field] = numberOrNull(stats[field]);
    const key = keyText(parts as unknown as ConnectionKey);
    const kept = this.samples.get(key) ?? [];
    // Re-inserted on each sample: the map's first key is the connection heard from least recently.
    this.samples.delete(key);
    kept.push(sample);
    if (kept.length > MAX_SAMPLES) kept.splice(0, kept.length - MAX_SAMPLES);
    this.samples.set(key, kept);
    if (this.samples.size > MAX_CONNECTIONS) this.samples.delete(this.samples.keys().next().value!);
  }

  /** The connection's samples of the last MAX_SAMPLE_AGE_MS, oldest first. */
  samplesOf(key: ConnectionKey): StatsSample[] {
    const oldest = this.now() - MAX_SAMPLE_AGE_MS;
    return (this.samples.get(keyText(key)) ?? []).filter((sample) => sample.timestamp >= oldest);
  }
}

/** Subscribes the store to `<namespace>.events.connection.stats` (a plain subscription: nothing is acked). */
export async function followConnectionStats(
  natsUrl: string,
  namespace: string,
  store: ConnectionStatsStore,
): Promise<NatsConnection> {
  const nats = await connect({ servers: natsUrl, name: 'console', maxReconnectAttempts: -1 });
  nats.subscribe(`${namespace}.events.connection.stats`, {
    callback: (error, message) => {
      if (error) return;
      try {
        store.record(message.json<StatsEvent>());
      } catch {
        // An undecodable event holds nothing to chart.
      }
    },
  });
  return nats;
}
