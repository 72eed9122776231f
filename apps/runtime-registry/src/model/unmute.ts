/**
 * A client's unmute against the operator's settings (service-spec 2.A: `audioUnmuteDisabled` and
 * `videoUnmuteDisabled` disable unmuting). While a connection's effective settings disable unmuting
 * a kind and the connection is muted in it (by an effective mute setting, whatever level it comes
 * from, or by the client itself), the client's unmute is refused, whatever it reported before.
 */
import { DomainError } from '@switchboard/contracts';
import { storedConnection } from './records.js';
import { effectiveSettings, type ConnectionIdentity, type LevelSnapshot } from './settings.js';

export type MediaKind = 'audio' | 'video';

/** The kinds a client's connection update unmutes (`localAudioMuted` / `localVideoMuted` false). */
export function unmutedKinds(update: { localAudioMuted?: boolean; localVideoMuted?: boolean }): MediaKind[] {
  const kinds: MediaKind[] = [];
  if (update.localAudioMuted === false) kinds.push('audio');
  if (update.localVideoMuted === false) kinds.push('video');
  return kinds;
}

/**
 * Throws `Forbidden` (details naming `localAudioMuted` / `localVideoMuted`) when the connection, as
 * read (`conn`: its record, `levels`: its five settings levels), may not unmute one of `kinds`.
 * The client edge answers it as `UnmuteDisabled`.
 */
export function checkUnmute(
  kinds: MediaKind[],
  conn: Record<string, string>,
  levels: LevelSnapshot,
  who: ConnectionIdentity,
): void {
  const settings = effectiveSettings(levels, who);
  const record = storedConnection(conn);
  const refused: Array<{ field: string; message: string }> = [];
  for (const kind of kinds) {
    const disabled = kind === 'audio' ? settings.audioUnmuteDisabled : settings.videoUnmuteDisabled;
    const byOperator = kind === 'audio' ? settings.audioMuted : settings.videoMuted;
    const byClient =
      (kind === 'audio' ? record.localAudioMuted : record.localVideoMuted) ?? record.streams[kind]?.muted ?? false;
    const field = kind === 'audio' ? 'localAudioMuted' : 'localVideoMuted';
    if (disabled && (byOperator || byClient)) refused.push({ field, message: `unmuting ${kind} is disabled` });
  }
  if (refused.length) throw new DomainError('Forbidden', 'Unmuting is disabled for this connection.', refused);
}
