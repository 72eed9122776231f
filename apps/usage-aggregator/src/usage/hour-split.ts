/**
 * Hour arithmetic of the usage ledger (pure functions, integer milliseconds only).
 *
 * A connection's booked contribution is a function of three values of its ledger row: when it
 * was connected, when it ended and its maximum pixel count. Every event changes the row
 * monotonically (earliest connected, earliest end, largest pixel count), and the hourly rows
 * receive the difference between the contribution after and before the change. That makes the
 * result independent of the order events are applied in, and applying the same row twice adds 0.
 */
import { USAGE_BUCKET_MS } from '@switchboard/contracts';

export const HOUR_MS = USAGE_BUCKET_MS;

/** Start of the clock hour holding `ms` (epoch-aligned, UTC). */
export function floorHour(ms: number): number {
  return ms - (((ms % HOUR_MS) + HOUR_MS) % HOUR_MS);
}

/** The first hour boundary at or after `ms`. */
export function ceilHour(ms: number): number {
  const f = floorHour(ms);
  return f === ms ? ms : f + HOUR_MS;
}

export interface HourShare {
  hourStart: number;
  ms: number;
}

/** `[start, end)` cut at hour boundaries; empty when `end <= start`. The parts sum to `end - start`. */
export function splitByHour(start: number, end: number): HourShare[] {
  const out: HourShare[] = [];
  if (!(end > start)) return out;
  for (let hour = floorHour(start); hour < end; hour += HOUR_MS) {
    const from = Math.max(hour, start);
    const to = Math.min(hour + HOUR_MS, end);
    out.push({ hourStart: hour, ms: to - from });
  }
  return out;
}

/** What the ledger knows about one connection. */
export interface ConnectionSpan {
  connectedAt: number | null;
  endedAt: number | null;
  maxPixelCount: number;
}

/** Booked participant time of a connection: nothing until it has both a start and an end. */
export function contribution(span: ConnectionSpan): Array<HourShare & { maxPixelCount: number }> {
  if (span.connectedAt === null || span.endedAt === null) return [];
  return splitByHour(span.connectedAt, span.endedAt).map((s) => ({ ...s, maxPixelCount: span.maxPixelCount }));
}

export interface MinutesDelta {
  hourStart: number;
  maxPixelCount: number;
  /** Milliseconds to add (negative: to remove). Never 0. */
  ms: number;
}

/**
 * What must change in the hourly rows when a connection's span goes from `before` to `after`,
 * sorted by hour then pixel count (a fixed lock order for concurrent writers).
 */
export function contributionDelta(before: ConnectionSpan | null, after: ConnectionSpan): MinutesDelta[] {
  const sums = new Map<string, MinutesDelta>();
  const add = (parts: Array<HourShare & { maxPixelCount: number }>, sign: 1 | -1) => {
    for (const p of parts) {
      const key = `${p.hourStart}:${p.maxPixelCount}`;
      const entry = sums.get(key) ?? { hourStart: p.hourStart, maxPixelCount: p.maxPixelCount, ms: 0 };
      entry.ms += sign * p.ms;
      sums.set(key, entry);
    }
  };
  if (before) add(contribution(before), -1);
  add(contribution(after), 1);
  return [...sums.values()]
    .filter((d) => d.ms !== 0)
    .sort((a, b) => a.hourStart - b.hourStart || a.maxPixelCount - b.maxPixelCount);
}

/** Merges an observation into a span: earliest connected, earliest end, largest pixel count. */
export function mergeSpan(span: ConnectionSpan, seen: Partial<ConnectionSpan>): ConnectionSpan {
  const earliest = (a: number | null, b: number | null | undefined) =>
    b === null || b === undefined ? a : a === null ? b : Math.min(a, b);
  return {
    connectedAt: earliest(span.connectedAt, seen.connectedAt),
    endedAt: earliest(span.endedAt, seen.endedAt),
    maxPixelCount: Math.max(span.maxPixelCount, seen.maxPixelCount ?? 0),
  };
}

export function sameSpan(a: ConnectionSpan, b: ConnectionSpan): boolean {
  return a.connectedAt === b.connectedAt && a.endedAt === b.endedAt && a.maxPixelCount === b.maxPixelCount;
}
