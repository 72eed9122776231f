import { useState } from 'react';
import { api } from '../api';
import { loadApplicationIds, usePolled } from '../hooks';
import { StatsChart } from '../StatsChart';
import type { ODataList, UsageRecord } from '../types';

const DAY_MS = 86_400_000;
const COLORS = ['#1d3557', '#d35400', '#1e6b30', '#5b2c83', '#9b1c1c', '#0b4f9c'];

export interface DailyUsage {
  /** UTC days (YYYY-MM-DD), oldest first. */
  days: string[];
  /** Max pixel counts of the buckets, smallest first. */
  buckets: number[];
  /** Participant minutes per bucket, one per day. */
  minutes: Map<number, number[]>;
  messages: number[];
}

/** The hourly usage records summed per UTC day and pixel-count bucket. */
export function dailyUsage(records: UsageRecord[]): DailyUsage {
  const days = [...new Set(records.map((record) => record.startTimestamp.slice(0, 10)))].sort();
  const buckets = [...new Set(records.flatMap((record) => record.participantMinutes.map((entry) => entry.key)))].sort(
    (one, other) => one - other,
  );
  const minutes = new Map(buckets.map((bucket) => [bucket, days.map(() => 0)]));
  const messages = days.map(() => 0);
  for (const record of records) {
    const day = days.indexOf(record.startTimestamp.slice(0, 10));
    messages[day]! += record.participantMessages;
    for (const entry of record.participantMinutes)
      minutes.get(entry.key)![day]! += entry.value.usageParticipantMinutes ?? 0;
  }
  return { days, buckets, minutes, messages };
}

const round = (value: number) => String(Math.round(value * 100) / 100);
const bucketLabel = (bucket: number) => `up to ${bucket} px`;

/** Participant minutes per application and day, by pixel-count bucket (interface B `Usage`), as a chart and a table. */
export function UsagePage() {
  const applicationIds = usePolled(loadApplicationIds, []).data ?? [];
  const [chosen, setChosen] = useState('');
  const [from, setFrom] = useState(() => new Date(Date.now() - 30 * DAY_MS).toISOString().slice(0, 10));
  const [to, setTo] = useState(() => new Date().toISOString().slice(0, 10));
  const applicationId = chosen || applicationIds[0] || '';
  const query = new URLSearchParams({
    applicationId,
    startTimestamp: String(Date.parse(from)),
    endTimestamp: String(Date.parse(to) + DAY_MS),
    $top: '1000',
  }).toString();
  const usage = usePolled(
    () =>
      applicationId ? api<ODataList<UsageRecord>>('GET', `/api/b/Usage?${query}`) : Promise.resolve({ value: [] }),
    [query],
  );
  const daily = dailyUsage(usage.data?.value ?? []);
  return (
    <section aria-labelledby="usage-title">
      <h2 id="usage-title">Usage</h2>
      <form className="filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          Application
          <select value={applicationId} onChange={(event) => setChosen(event.target.value)}>
            {applicationIds.map((id) => (
              <option key={id} value={id}>
                {id}
              </option>
            ))}
          </select>
        </label>
        <label>
          From
          <input type="date" required value={from} onChange={(event) => setFrom(event.target.value)} />
        </label>
        <label>
          To
          <input type="date" required value={to} onChange={(event) => setTo(event.target.value)} />
        </label>
      </form>
      {usage.error && <p role="alert">{usage.error}</p>}
      {daily.days.length === 0 && <p>No usage in this period.</p>}
      {daily.days.length > 0 && (
        <>
          <StatsChart
            title="Participant minutes per day"
            unit="min"
            times={daily.days.map((day) => Date.parse(day) / 1000)}
            series={daily.buckets.map((bucket, index) => ({
              label: bucketLabel(bucket),
              color: COLORS[index % COLORS.length]!,
              values: daily.minutes.get(bucket)!,
            }))}
          />
          <table>
            <caption>Participant minutes per day and pixel-count bucket</caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                {daily.buckets.map((bucket) => (
                  <th key={bucket} scope="col">
                    {bucketLabel(bucket)}
                  </th>
                ))}
                <th scope="col">Messages</th>
              </tr>
            </thead>
            <tbody>
              {daily.days.map((day, index) => (
                <tr key={day} data-row-id={day}>
                  <th scope="row">{day}</th>
                  {daily.buckets.map((bucket) => (
                    <td key={bucket}>{round(daily.minutes.get(bucket)![index]!)}</td>
                  ))}
                  <td>{daily.messages[index]}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
