import { api, seg } from '../api';
import { LIVE_POLL_MS, usePolled } from '../hooks';
import { StatsChart } from '../StatsChart';
import type { ConnectionInfo, StatsSample } from '../types';

/** The packet loss of each interval between two samples, in percent (null where a count is missing). */
export function lossPercent(samples: StatsSample[]): Array<number | null> {
  return samples.map((sample, index) => {
    const previous = samples[index - 1];
    if (!previous) return null;
    const counts = [sample.packetsLost, previous.packetsLost, sample.packetsReceived, previous.packetsReceived];
    if (counts.some((count) => count === null)) return null;
    const lost = sample.packetsLost! - previous.packetsLost!;
    const total = lost + sample.packetsReceived! - previous.packetsReceived!;
    return total > 0 ? (100 * Math.max(0, lost)) / total : 0;
  });
}

const kbps = (value: number | null) => (value === null ? null : value / 1000);

function Charts({ samples }: { samples: StatsSample[] }) {
  const times = samples.map((sample) => sample.timestamp / 1000);
  return (
    <div className="charts">
      <StatsChart
        title="Bitrate"
        unit="kbit/s"
        times={times}
        series={[
          { label: 'send', color: '#1d3557', values: samples.map((sample) => kbps(sample.sendBitrate)) },
          { label: 'receive', color: '#d35400', values: samples.map((sample) => kbps(sample.receiveBitrate)) },
        ]}
      />
      <StatsChart
        title="Packet loss"
        unit="%"
        times={times}
        series={[{ label: 'lost', color: '#9b1c1c', values: lossPercent(samples) }]}
      />
      <StatsChart
        title="Jitter"
        unit="ms"
        times={times}
        series={[{ label: 'jitter', color: '#1e6b30', values: samples.map((sample) => sample.jitter) }]}
      />
      <StatsChart
        title="Round-trip time"
        unit="ms"
        times={times}
        series={[{ label: 'RTT', color: '#5b2c83', values: samples.map((sample) => sample.roundTripTime) }]}
      />
    </div>
  );
}

/** A connection: charts of its stats (read again every LIVE_POLL_MS while open), then every field as reported. */
export function ConnectionDetail({ connection, onClose }: { connection: ConnectionInfo; onClose: () => void }) {
  const ids = [
    connection.applicationId,
    connection.channelId,
    connection.userId,
    connection.deviceId,
    connection.clientId,
    connection.id,
  ];
  const statsPath = `/api/stats/${ids.map(seg).join('/')}`;
  const stats = usePolled(() => api<{ samples: StatsSample[] }>('GET', statsPath), [statsPath], LIVE_POLL_MS);
  const shown = (value: unknown) => {
    if (value === null || value === undefined) return '—';
    return typeof value === 'string' ? value : JSON.stringify(value);
  };
  return (
    <section aria-labelledby="connection-title" className="detail">
      <h4 id="connection-title">Connection {connection.id}</h4>
      <button type="button" onClick={onClose}>
        Close connection detail
      </button>
      {stats.error && <p role="alert">Stats: {stats.error}</p>}
      {stats.data && stats.data.samples.length === 0 && <p>No stats reported yet.</p>}
      {stats.data && stats.data.samples.length > 0 && <Charts samples={stats.data.samples} />}
      <dl>
        {Object.entries(connection).map(([field, value]) => (
          <div key={field}>
            <dt>{field}</dt>
            <dd>{shown(value)}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
