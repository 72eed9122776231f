import type { RecordingModeration } from '@switchboard/contracts';
import type { RecordingUpdateRow } from '../recordings/rows.js';

/** How far from Janus's moderation the timeline entry it carried out may lie (the event comes first). */
export const MODERATION_MATCH_MS = 2000;

type Kind = 'audio' | 'video';

const silenced = (u: RecordingUpdateRow, kind: Kind) =>
  kind === 'audio' ? u.audio_muted || u.audio_disabled : u.video_muted || u.video_disabled;

/**
 * The timeline entries to move to the time Janus changed the media: per moderation, the nearest
 * entry (within `MODERATION_MATCH_MS`) that turns that kind to what the moderation set, moved to
 * the moderation's time but never past its neighbours (the order of the timeline stays).
 */
export function moderatedTimes(updates: RecordingUpdateRow[], moderations: RecordingModeration[]): Map<number, number> {
  const moved = new Map<number, number>();
  const timeOf = (i: number) => moved.get(updates[i]!.index) ?? Number(updates[i]!.timestamp);
  for (const moderation of moderations)
    for (const kind of ['audio', 'video'] as const) {
      const muted = kind === 'audio' ? moderation.audioMuted : moderation.videoMuted;
      if (muted === undefined) continue;
      let best: number | null = null;
      for (let i = 1; i < updates.length; i++) {
        const turns = silenced(updates[i]!, kind) === muted && silenced(updates[i - 1]!, kind) !== muted;
        const distance = Math.abs(timeOf(i) - moderation.at);
        if (
          turns &&
          distance <= MODERATION_MATCH_MS &&
          (best === null || distance < Math.abs(timeOf(best) - moderation.at))
        )
          best = i;
      }
      if (best === null) continue;
      const earliest = timeOf(best - 1);
      const latest = best + 1 < updates.length ? timeOf(best + 1) : Infinity;
      moved.set(updates[best]!.index, Math.min(Math.max(moderation.at, earliest), latest));
    }
  return moved;
}

/** The moderations of an upload's metadata; none when absent or not what the agent writes. */
export function parseModerations(value: string | undefined): RecordingModeration[] {
  if (!value) return [];
  try {
    const parsed = JSON.parse(value) as unknown;
    if (!Array.isArray(parsed)) return [];
    return parsed.filter(
      (m): m is RecordingModeration =>
        typeof m === 'object' &&
        m !== null &&
        Number.isSafeInteger((m as RecordingModeration).at) &&
        ['audioMuted', 'videoMuted'].every((k) => {
          const flag = (m as Record<string, unknown>)[k];
          return flag === undefined || typeof flag === 'boolean';
        }),
    );
  } catch {
    return [];
  }
}
