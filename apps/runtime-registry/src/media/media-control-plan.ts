/**
 * From domain events to media-agent commands (pure): which events ask something of a Janus server,
 * and the commands, grouped per server and channel, that carry a group of them out.
 */
import type { MediaAgentCommand } from '@switchboard/contracts';
import type { MediaDomainEvent, MediaEventContext } from './media-control-context.js';

/** Connections per grouped command at most (the contract's limit). */
export const MAX_CONNECTIONS_PER_COMMAND = 1000;

type ConnectionKind = 'sfu' | 'mcu';

export interface ConnectionRef {
  mediaServerId: string;
  applicationId: string;
  channelId: string;
  userId: string;
  deviceId: string;
  clientId: string;
  connectionId: string;
  kind: ConnectionKind;
}

export type MuteIntent = Extract<MediaIntent, { act: 'mute' }>;

/** Janus records an upstream sfu connection or an mcu participant while its effective `recording` is on (issue 24). */
export type RecordIntent = ConnectionRef & { act: 'record'; recording: boolean };

/** What one event asks of the media plane. */
export type MediaIntent =
  | (ConnectionRef & { act: 'mute'; audioMuted: boolean; videoMuted: boolean })
  | (ConnectionRef & { act: 'end'; kicked: boolean })
  | { act: 'destroy'; applicationId: string; channelId: string };

/** One command to one server, and the events (their indexes in the group) it carries out. */
export interface PlannedCommand {
  mediaServerId: string;
  command: MediaAgentCommand;
  sources: number[];
  /** `room.destroy` / `mixer.destroy`: sent only while the channel has no connections on the server. */
  destroysChannel?: boolean;
}

/** The commands of a group, in the order they go to one server: mutes, then ends, then destroys. */
export type CommandPhase = 'mute' | 'end' | 'destroy';

/** What an event asks of the media plane; null when nothing (not a Janus matter, or not such an event). */
export function mediaIntent(event: MediaDomainEvent): MediaIntent | null {
  const info = event.event;
  if (info.type === 'channel.deactivated' && info.channel)
    return { act: 'destroy', applicationId: event.applicationId, channelId: info.channel.id };
  const media = event.media;
  const connection = info.connection;
  if (!media || !connection || media.connectionType === 'peer') return null;
  const ref: ConnectionRef = {
    mediaServerId: media.mediaServerId,
    applicationId: event.applicationId,
    channelId: connection.channelId,
    userId: connection.userId,
    deviceId: connection.deviceId,
    clientId: connection.clientId,
    connectionId: connection.id,
    kind: media.connectionType,
  };
  if (info.type === 'connection.closed' || info.type === 'connection.failed')
    return { ...ref, act: 'end', kicked: media.kicked };
  // Settings writes come with the api origin; a client's own updates change no effective mute.
  if (info.type === 'connection.updated') return info.origin === 'api' && isMutable(media) ? muteOf(ref, media) : null;
  // Its publisher is live now: mutes set before it joined apply (unmuted is how it starts).
  if (info.type === 'connection.connected' && isMutable(media) && (media.audioMuted || media.videoMuted))
    return muteOf(ref, media);
  return null;
}

/**
 * Whether an event asks Janus to start or stop recording a publisher: when it becomes connected
 * (recording from the start) and on every settings update (its effective `recording` may have changed).
 * The agent takes a repeated start or stop as done.
 */
export function recordIntent(event: MediaDomainEvent): RecordIntent | null {
  const info = event.event;
  const media = event.media;
  const connection = info.connection;
  if (!media || !connection || !isMutable(media)) return null;
  // Recording is the operator's and the configuration's: a client's own update never changes it.
  const settingsChange = info.type === 'connection.updated' && info.origin !== 'client';
  if (!settingsChange && !(info.type === 'connection.connected' && connection.recording)) return null;
  return {
    mediaServerId: media.mediaServerId,
    applicationId: event.applicationId,
    channelId: connection.channelId,
    userId: connection.userId,
    deviceId: connection.deviceId,
    clientId: connection.clientId,
    connectionId: connection.id,
    kind: media.connectionType === 'mcu' ? 'mcu' : 'sfu',
    act: 'record',
    recording: connection.recording,
  };
}

/** The record commands of a group (one per connection, its latest intent), for Janus servers only. */
export function planRecords(
  intents: ReadonlyArray<RecordIntent | null>,
  janusServers: ReadonlySet<string>,
): PlannedCommand[] {
  const latest = new Map<string, { intent: RecordIntent; sources: number[] }>();
  intents.forEach((intent, index) => {
    if (!intent || !janusServers.has(intent.mediaServerId)) return;
    const key = `${intent.mediaServerId}\n${channelKey(intent)}\n${intent.connectionId}`;
    latest.set(key, { intent, sources: [...(latest.get(key)?.sources ?? []), index] });
  });
  return [...latest.values()].map(({ intent, sources }) => {
    const { applicationId, channelId, connectionId, recording } = intent;
    const command: MediaAgentCommand = { kind: 'connection.record', applicationId, channelId, connectionId, recording };
    return { mediaServerId: intent.mediaServerId, command, sources };
  });
}

/** Upstream sfu connections (their publisher) and mcu participants (audio) can be muted at the server. */
function isMutable(media: MediaEventContext): boolean {
  if (media.connectionType === 'sfu') return media.remoteConnectionId === null;
  return media.connectionType === 'mcu';
}

function muteOf(ref: ConnectionRef, media: MediaEventContext): MediaIntent {
  return { ...ref, act: 'mute', audioMuted: media.audioMuted, videoMuted: media.videoMuted };
}

/**
 * The commands of a group of intents (index = the event's place in the group). Only connections on
 * `janusServers` are commanded; a channel's destroy goes to each of them. A connection's latest mute
 * wins, and none is sent for a connection the group also ends.
 */
export function planCommands(
  intents: ReadonlyArray<MediaIntent | null>,
  janusServers: ReadonlySet<string>,
): Record<CommandPhase, PlannedCommand[]> {
  const mutes = new Map<string, { intent: MuteIntent; sources: number[] }>();
  const ends = new Map<string, { intent: Extract<MediaIntent, { act: 'end' }>; sources: number[] }>();
  const destroys = new Map<string, { applicationId: string; channelId: string; sources: number[] }>();
  intents.forEach((intent, index) => {
    if (!intent) return;
    if (intent.act === 'destroy') {
      const key = channelKey(intent);
      const entry = destroys.get(key) ?? { ...intent, sources: [] };
      entry.sources.push(index);
      destroys.set(key, entry);
      return;
    }
    if (!janusServers.has(intent.mediaServerId)) return;
    const key = `${intent.mediaServerId}\n${channelKey(intent)}\n${intent.connectionId}`;
    if (intent.act === 'mute') {
      const previous = mutes.get(key)?.sources ?? [];
      mutes.set(key, { intent, sources: [...previous, index] });
    } else {
      const entry = ends.get(key) ?? { intent, sources: [] };
      // A kick in the group wins over a plain close of the same connection.
      if (intent.kicked) entry.intent = intent;
      entry.sources.push(index);
      ends.set(key, entry);
    }
  });
  for (const [key, end] of ends) {
    const mute = mutes.get(key);
    if (!mute) continue;
    end.sources = [...end.sources, ...mute.sources].sort((a, b) => a - b);
    mutes.delete(key);
  }
  return {
    mute: groupMutes([...mutes.values()]),
    end: groupEnds([...ends.values()]),
    destroy: [...destroys.values()].flatMap((d) =>
      [...janusServers].flatMap((mediaServerId): PlannedCommand[] =>
        (['room.destroy', 'mixer.destroy'] as const).map((kind) => ({
          mediaServerId,
          command: { kind, applicationId: d.applicationId, channelId: d.channelId },
          sources: d.sources,
          destroysChannel: true,
        })),
      ),
    ),
  };
}

function channelKey(c: { applicationId: string; channelId: string }): string {
  return `${c.applicationId}\n${c.channelId}`;
}

interface Grouped {
  mediaServerId: string;
  applicationId: string;
  channelId: string;
  connectionIds: string[];
  sources: number[];
}

/** Collects items under a key into groups of at most MAX_CONNECTIONS_PER_COMMAND connections. */
function collect<T extends { intent: ConnectionRef; sources: number[] }>(
  items: T[],
  keyOf: (item: T) => string,
): Array<Grouped & { sample: T }> {
  const groups = new Map<string, Array<Grouped & { sample: T }>>();
  for (const item of items) {
    const key = `${item.intent.mediaServerId}\n${channelKey(item.intent)}\n${keyOf(item)}`;
    const list = groups.get(key) ?? [];
    let last = list.at(-1);
    if (!last || last.connectionIds.length >= MAX_CONNECTIONS_PER_COMMAND) {
      const { mediaServerId, applicationId, channelId } = item.intent;
      last = { mediaServerId, applicationId, channelId, connectionIds: [], sources: [], sample: item };
      list.push(last);
    }
    last.connectionIds.push(item.intent.connectionId);
    last.sources.push(...item.sources);
    groups.set(key, list);
  }
  return [...groups.values()].flat();
}

function groupMutes(items: Array<{ intent: MuteIntent; sources: number[] }>) {
  const key = (i: (typeof items)[number]) =>
    `${i.intent.kind}:${i.intent.audioMuted ? 1 : 0}${i.intent.kind === 'sfu' && i.intent.videoMuted ? 1 : 0}`;
  return collect(items, key).map((g): PlannedCommand => {
    const { applicationId, channelId, connectionIds } = g;
    const { kind, audioMuted, videoMuted } = g.sample.intent;
    const command: MediaAgentCommand =
      kind === 'sfu'
        ? { kind: 'connections.moderate', applicationId, channelId, connectionIds, audioMuted, videoMuted }
        : { kind: 'mixer.mute', applicationId, channelId, connectionIds, muted: audioMuted };
    return { mediaServerId: g.mediaServerId, command, sources: g.sources };
  });
}

function groupEnds(items: Array<{ intent: Extract<MediaIntent, { act: 'end' }>; sources: number[] }>) {
  const kicks = items.filter((i) => i.intent.kicked);
  const planned = collect(kicks, (i) => i.intent.kind).map((g): PlannedCommand => {
    const { applicationId, channelId, connectionIds } = g;
    const kind = g.sample.intent.kind === 'sfu' ? 'connections.kick' : 'mixer.kick';
    return {
      mediaServerId: g.mediaServerId,
      command: { kind, applicationId, channelId, connectionIds },
      sources: g.sources,
    };
  });
  // A leave names one connection (the contract has no grouped form).
  for (const { intent, sources } of items.filter((i) => !i.intent.kicked)) {
    const { applicationId, channelId, connectionId } = intent;
    const kind = intent.kind === 'sfu' ? 'connection.leave' : 'mixer.leave';
    planned.push({
      mediaServerId: intent.mediaServerId,
      command: { kind, applicationId, channelId, connectionId },
      sources,
    });
  }
  return planned;
}
