import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { RecordingDomainEvent, WebhookEventConnection } from '@switchboard/contracts';
import { SERVICE_CONFIG } from '@switchboard/service-kit';
import { DataSource, type EntityManager } from 'typeorm';
import type { RecordingServiceConfig } from '../config.js';
import { RecordingPaths, audioBase, videoBase } from '../files/paths.js';
import { ChannelSettings } from './channel-settings.js';
import {
  CONNECTION_END_TABLE,
  CONNECTION_RECORDING_TABLE,
  CHANNEL_RECORDING_TABLE,
  RECORDING_UPDATE_TABLE,
} from '../recordings/recordings.store.js';
import type { ChannelRecordingRow, ConnectionRecordingRow, RecordingUpdateRow } from '../recordings/rows.js';

export interface Flags {
  audioMuted: boolean;
  videoMuted: boolean;
  audioDisabled: boolean;
  videoDisabled: boolean;
}

/** What a committed transaction asks for afterwards: channel recordings that stopped (ingest them). */
export interface Outcome {
  stoppedChannelRecordings: string[];
  /** The event type concerns recordings. */
  relevant?: boolean;
  /** It was applied now (false: its id had been applied before). */
  applied?: boolean;
}

/**
 * Thrown inside the event's transaction when it must open a channel recording and the channel's
 * config is not known yet: the transaction rolls back, the config is asked (outside any
 * transaction) and the event is applied again with it.
 */
class ChannelConfigNeeded extends Error {
  constructor(
    readonly applicationId: string,
    readonly channelId: string,
  ) {
    super('the channel config is needed to open a channel recording');
  }
}

/** What the channel config decides for a channel recording opened while applying an event. */
interface OpenSettings {
  applicationId: string;
  channelId: string;
  muxEnabled: boolean;
}

const TERMINAL_STATES = new Set(['closed', 'failed']);
const TERMINAL_TYPES = new Set(['connection.closed', 'connection.failed']);

/** Serializes everything that happens in one channel across replicas (transaction-scoped). */
export async function lockChannel(m: EntityManager, applicationId: string, channelId: string): Promise<void> {
  await m.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 7305))', [
    JSON.stringify(['recording', applicationId, channelId]),
  ]);
}

export function flagsOf(c: WebhookEventConnection): Flags {
  return {
    audioMuted: Boolean(c.localAudioMuted),
    videoMuted: Boolean(c.localVideoMuted),
    audioDisabled: Boolean(c.localAudioDisabled || c.remoteAudioDisabled),
    videoDisabled: Boolean(c.localVideoDisabled || c.remoteVideoDisabled),
  };
}

/**
 * The recording lifecycle, driven by domain events (README "Lifecycle"). Each event is applied in
 * one transaction that also records its id (`processed_event`), so a redelivered event changes
 * nothing; the consumer acks after the commit. Connection events start and stop connection
 * recordings (the first opens the channel recording, the last to stop closes it) and append to
 * their timeline; events older than what a recording already applied change only its timeline.
 */
@Injectable()
export class LifecycleService {
  constructor(
    private readonly ds: DataSource,
    @Inject(SERVICE_CONFIG) private readonly config: RecordingServiceConfig,
    @Inject(RecordingPaths) private readonly paths: RecordingPaths,
    private readonly channelSettings: ChannelSettings,
  ) {}

  static isRelevant(type: string): boolean {
    if (type.startsWith('connection.recording') || type.startsWith('channel.recording')) return false;
    return type.startsWith('connection.') || type === 'client.unregistered' || type === 'channel.deactivated';
  }

  async apply(de: RecordingDomainEvent): Promise<Outcome> {
    if (!LifecycleService.isRelevant(de.event.type)) return { stoppedChannelRecordings: [] };
    try {
      return await this.applyOnce(de, null);
    } catch (e) {
      if (!(e instanceof ChannelConfigNeeded)) throw e;
      const settings: OpenSettings = {
        applicationId: e.applicationId,
        channelId: e.channelId,
        muxEnabled: await this.channelSettings.muxEnabled(e.applicationId, e.channelId),
      };
      return this.applyOnce(de, settings);
    }
  }

  private async applyOnce(de: RecordingDomainEvent, settings: OpenSettings | null): Promise<Outcome> {
    const outcome: Outcome = { stoppedChannelRecordings: [], relevant: true };
    const e = de.event;
    await this.ds.transaction(async (m) => {
      const fresh = (await m.query(
        `INSERT INTO recording.processed_event (event_id, processed_on) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING event_id`,
        [e.id, Date.now()],
      )) as unknown[];
      if (fresh.length === 0) return;
      outcome.applied = true;
      if (e.type.startsWith('connection.') && e.connection)
        await this.onConnection(m, de, e.connection, outcome, settings);
      else if (e.type === 'client.unregistered' && e.client) {
        const c = e.client;
        await this.stopWhere(
          m,
          { applicationId: c.applicationId, userId: c.userId, deviceId: c.deviceId, clientId: c.id },
          e.timestamp,
          'client unregistered',
          outcome,
        );
      } else if (e.type === 'channel.deactivated' && e.channel) {
        await this.stopWhere(
          m,
          { applicationId: e.channel.applicationId, channelId: e.channel.id },
          e.timestamp,
          'channel deactivated',
          outcome,
        );
      }
    });
    return outcome;
  }

  private async onConnection(
    m: EntityManager,
    de: RecordingDomainEvent,
    c: WebhookEventConnection,
    outcome: Outcome,
    settings: OpenSettings | null,
  ): Promise<void> {
    const ts = de.event.timestamp;
    await lockChannel(m, c.applicationId, c.channelId);
    const key = [c.applicationId, c.channelId, c.userId, c.deviceId, c.clientId, c.id];
    const keySql =
      'application_id = $1 AND channel_id = $2 AND user_id = $3 AND device_id = $4 AND client_id = $5 AND connection_id = $6';
    const [open] = (await m.query(
      `SELECT * FROM ${CONNECTION_RECORDING_TABLE} WHERE ${keySql} AND stop_timestamp IS NULL FOR UPDATE`,
      key,
    )) as ConnectionRecordingRow[];
    const terminal = TERMINAL_TYPES.has(de.event.type) || TERMINAL_STATES.has(c.state);
    const mode = de.recording?.recordingMode ?? null;
    const hasAudio = Boolean(c.hasAudio) && mode !== 'Video';
    const hasVideo = Boolean(c.hasVideo) && mode !== 'Audio';
    const wanted = Boolean(c.recording) && !terminal && (hasAudio || hasVideo);
    const flags = flagsOf(c);

    const endReason = `connection ${TERMINAL_TYPES.has(de.event.type) ? de.event.type.slice('connection.'.length) : c.state}`;

    if (open) {
      if (!wanted) {
        await this.stopConnection(m, open, ts, terminal ? endReason : 'recording disabled', false, outcome);
        return;
      }
      if (ts < Number(open.last_event_on)) {
        // Older than what this recording already reflects: its change goes into the timeline at its
        // time; the recording's state stays that of the latest event.
        await this.insertLateUpdate(m, open.id, ts, c.tag ?? null, flags);
        await m.query(
          `UPDATE ${CONNECTION_RECORDING_TABLE} SET last_seen_on = GREATEST(last_seen_on, $2) WHERE id = $1`,
          [open.id, Date.now()],
        );
        return;
      }
      const changed =
        flags.audioMuted !== open.audio_muted ||
        flags.videoMuted !== open.video_muted ||
        flags.audioDisabled !== open.audio_disabled ||
        flags.videoDisabled !== open.video_disabled ||
        (c.tag ?? null) !== open.connection_tag;
      if (changed) {
        await m.query(
          `INSERT INTO ${RECORDING_UPDATE_TABLE} (connection_recording_id, index, timestamp, connection_tag, audio_muted, video_muted, audio_disabled, video_disabled)
           SELECT $1, COALESCE(max(index) + 1, 0), $2, $3, $4, $5, $6, $7 FROM ${RECORDING_UPDATE_TABLE} WHERE connection_recording_id = $1`,
          [open.id, ts, c.tag ?? null, flags.audioMuted, flags.videoMuted, flags.audioDisabled, flags.videoDisabled],
        );
      }
      await m.query(
        `UPDATE ${CONNECTION_RECORDING_TABLE} SET last_event_on = $2, last_seen_on = $10, connection = $3, audio_muted = $4, video_muted = $5, audio_disabled = $6, video_disabled = $7, connection_tag = $8,
           modified_on = CASE WHEN $9 THEN $10 ELSE modified_on END WHERE id = $1`,
        [
          open.id,
          ts,
          JSON.stringify(c),
          flags.audioMuted,
          flags.videoMuted,
          flags.audioDisabled,
          flags.videoDisabled,
          c.tag ?? null,
          changed,
          Date.now(),
        ],
      );
      return;
    }
    if (!wanted) {
      // A recorded connection ended with no recording open: its connect has not been applied yet
      // (another replica, a redelivery) or it never recorded. Remember the end for a late connect.
      if (terminal && c.recording) {
        await m.query(
          `INSERT INTO ${CONNECTION_END_TABLE} (application_id, channel_id, user_id, device_id, client_id, connection_id, stop_timestamp, reason, created_on)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           ON CONFLICT (application_id, channel_id, user_id, device_id, client_id, connection_id) DO UPDATE SET stop_timestamp = LEAST(${CONNECTION_END_TABLE}.stop_timestamp, EXCLUDED.stop_timestamp)`,
          [...key, ts, endReason, Date.now()],
        );
      }
      return;
    }
    // Out of order: a recording of this connection already stopped after this event happened. An
    // event from while it was recording still goes into its timeline.
    const [later] = (await m.query(
      `SELECT id, start_timestamp FROM ${CONNECTION_RECORDING_TABLE} WHERE ${keySql} AND stop_timestamp > $7 ORDER BY start_timestamp LIMIT 1`,
      [...key, ts],
    )) as Array<{
      id: string;
      start_timestamp: string;
    }>;
    if (later) {
      if (Number(later.start_timestamp) <= ts) await this.insertLateUpdate(m, later.id, ts, c.tag ?? null, flags);
      return;
    }
    const started = await this.startConnection(m, de, c, { hasAudio, hasVideo, flags }, settings);
    // The connection already ended (its end was applied first): the recording stops there.
    const [ended] = (await m.query(
      `SELECT stop_timestamp, reason FROM ${CONNECTION_END_TABLE} WHERE ${keySql} AND stop_timestamp >= $7`,
      [...key, ts],
    )) as Array<{ stop_timestamp: string; reason: string }>;
    if (ended) await this.stopConnection(m, started, Number(ended.stop_timestamp), ended.reason, false, outcome);
  }

  private async startConnection(
    m: EntityManager,
    de: RecordingDomainEvent,
    c: WebhookEventConnection,
    o: { hasAudio: boolean; hasVideo: boolean; flags: Flags },
    settings: OpenSettings | null,
  ): Promise<ConnectionRecordingRow> {
    const ts = de.event.timestamp;
    const now = Date.now();
    let [channel] = (await m.query(
      `SELECT * FROM ${CHANNEL_RECORDING_TABLE} WHERE application_id = $1 AND channel_id = $2 AND stop_timestamp IS NULL FOR UPDATE`,
      [c.applicationId, c.channelId],
    )) as ChannelRecordingRow[];
    if (!channel) {
      if (settings?.applicationId !== c.applicationId || settings.channelId !== c.channelId)
        throw new ChannelConfigNeeded(c.applicationId, c.channelId);
      const id = randomUUID();
      const expiry =
        this.config.recordingsRetentionSeconds > 0 ? ts + this.config.recordingsRetentionSeconds * 1000 : null;
      [channel] = (await m.query(
        `INSERT INTO ${CHANNEL_RECORDING_TABLE} (id, organization_id, application_id, channel_id, created_on, modified_on, tag, start_timestamp, expiry_timestamp, has_audio, has_video,
           recording_path, mux_enabled, move_enabled, delete_files, stage, stage_changed_on)
         VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $8, $9, $10, $11, $12, true, $13, 'recording', $5) RETURNING *`,
        [
          id,
          de.organizationId,
          c.applicationId,
          c.channelId,
          now,
          c.recordingTag ?? null,
          ts,
          expiry,
          o.hasAudio,
          o.hasVideo,
          this.paths.workDir(c.applicationId, c.channelId, id),
          settings.muxEnabled,
          this.config.recordingsDeleteFiles,
        ],
      )) as ChannelRecordingRow[];
    } else if ((o.hasAudio && !channel.has_audio) || (o.hasVideo && !channel.has_video)) {
      await m.query(
        `UPDATE ${CHANNEL_RECORDING_TABLE} SET has_audio = has_audio OR $2, has_video = has_video OR $3, modified_on = $4 WHERE id = $1`,
        [channel.id, o.hasAudio, o.hasVideo, now],
      );
    }
    const id = randomUUID();
    const [row] = (await m.query(
      `INSERT INTO ${CONNECTION_RECORDING_TABLE} (id, channel_recording_id, organization_id, application_id, channel_id, user_id, device_id, client_id, connection_id, client_protocol,
         connection_type, connection_tag, tag, audio_id, video_id, created_on, modified_on, start_timestamp, has_audio, has_video, audio_muted, video_muted,
         audio_disabled, video_disabled, last_event_on, last_seen_on, connection)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16, $17, $18, $19, $20, $21, $22, $23, $17, $16, $24) RETURNING *`,
      [
        id,
        channel!.id,
        de.organizationId,
        c.applicationId,
        c.channelId,
        c.userId,
        c.deviceId,
        c.clientId,
        c.id,
        de.recording?.clientProtocol ?? null,
        c.type ?? null,
        c.tag ?? null,
        c.recordingTag ?? null,
        o.hasAudio ? randomUUID() : null,
        o.hasVideo ? randomUUID() : null,
        now,
        ts,
        o.hasAudio,
        o.hasVideo,
        o.flags.audioMuted,
        o.flags.videoMuted,
        o.flags.audioDisabled,
        o.flags.videoDisabled,
        JSON.stringify(c),
      ],
    )) as ConnectionRecordingRow[];
    // The timeline starts with the state the connection is recorded in.
    await m.query(
      `INSERT INTO ${RECORDING_UPDATE_TABLE} (connection_recording_id, index, timestamp, connection_tag, audio_muted, video_muted, audio_disabled, video_disabled) VALUES ($1, 0, $2, $3, $4, $5, $6, $7)`,
      [id, ts, c.tag ?? null, o.flags.audioMuted, o.flags.videoMuted, o.flags.audioDisabled, o.flags.videoDisabled],
    );
    return row!;
  }

  /**
   * A change that happened at `ts` but arrived after later ones (events redelivered after a failure,
   * or handled by another replica first): inserted into the timeline after the last entry at or
   * before `ts`, later entries moving up by one, unless the state there is already the same.
   */
  private async insertLateUpdate(
    m: EntityManager,
    connectionRecordingId: string,
    ts: number,
    tag: string | null,
    flags: Flags,
  ): Promise<void> {
    const [before] = (await m.query(
      `SELECT * FROM ${RECORDING_UPDATE_TABLE} WHERE connection_recording_id = $1 AND timestamp <= $2 ORDER BY index DESC LIMIT 1`,
      [connectionRecordingId, ts],
    )) as RecordingUpdateRow[];
    if (!before) return;
    const same =
      before.audio_muted === flags.audioMuted &&
      before.video_muted === flags.videoMuted &&
      before.audio_disabled === flags.audioDisabled &&
      before.video_disabled === flags.videoDisabled &&
      before.connection_tag === tag;
    if (same) return;
    // Two steps, since the primary key (recording, index) is checked row by row.
    await m.query(
      `UPDATE ${RECORDING_UPDATE_TABLE} SET index = -index - 2 WHERE connection_recording_id = $1 AND index > $2`,
      [connectionRecordingId, before.index],
    );
    await m.query(
      `UPDATE ${RECORDING_UPDATE_TABLE} SET index = -index - 1 WHERE connection_recording_id = $1 AND index < 0`,
      [connectionRecordingId],
    );
    await m.query(
      `INSERT INTO ${RECORDING_UPDATE_TABLE} (connection_recording_id, index, timestamp, connection_tag, audio_muted, video_muted, audio_disabled, video_disabled) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        connectionRecordingId,
        before.index + 1,
        ts,
        tag,
        flags.audioMuted,
        flags.videoMuted,
        flags.audioDisabled,
        flags.videoDisabled,
      ],
    );
  }

  /**
   * Stops one open connection recording at `ts` (never before its start): fills the first/last frame
   * timestamps and the expected file names (ingest replaces them with what the media server wrote),
   * then closes the channel recording when no connection recording in it is open any more.
   */
  async stopConnection(
    m: EntityManager,
    row: ConnectionRecordingRow,
    ts: number,
    reason: string,
    orphaned: boolean,
    outcome: Outcome,
  ): Promise<void> {
    const now = Date.now();
    const stop = Math.max(ts, Number(row.start_timestamp));
    const metadata = orphaned
      ? JSON.stringify({
          orphaned: true,
          reason,
          closedOn: new Date(now).toISOString(),
          lastEventOn: new Date(Number(row.last_event_on)).toISOString(),
        })
      : row.metadata;
    await m.query(
      `UPDATE ${CONNECTION_RECORDING_TABLE} SET stop_timestamp = $2, closed_reason = $3, orphaned = $4, metadata = $5, modified_on = $6, last_event_on = GREATEST(last_event_on, $2),
         audio_first_frame_timestamp = CASE WHEN has_audio THEN start_timestamp END, audio_last_frame_timestamp = CASE WHEN has_audio THEN $2::bigint END,
         video_first_frame_timestamp = CASE WHEN has_video THEN start_timestamp END, video_last_frame_timestamp = CASE WHEN has_video THEN $2::bigint END,
         audio_file_name = CASE WHEN has_audio THEN $7 END, video_file_name = CASE WHEN has_video THEN $8 END
       WHERE id = $1 AND stop_timestamp IS NULL`,
      [row.id, stop, reason, orphaned, metadata, now, audioBase(row.id), videoBase(row.id)],
    );
    const [open] = (await m.query(
      `SELECT count(*)::int AS n FROM ${CONNECTION_RECORDING_TABLE} WHERE channel_recording_id = $1 AND stop_timestamp IS NULL`,
      [row.channel_recording_id],
    )) as Array<{ n: number }>;
    if ((open?.n ?? 0) > 0) return;
    // TypeORM answers an UPDATE ... RETURNING with [rows, affected].
    const [closed] = (await m.query(
      `UPDATE ${CHANNEL_RECORDING_TABLE} SET stop_timestamp = GREATEST(start_timestamp, (SELECT max(stop_timestamp) FROM ${CONNECTION_RECORDING_TABLE} WHERE channel_recording_id = $1)),
         stage = 'ingesting', stage_changed_on = $2, mux_pending = mux_enabled, modified_on = $2
       WHERE id = $1 AND stop_timestamp IS NULL RETURNING id`,
      [row.channel_recording_id, now],
    )) as [Array<{ id: string }>, number];
    for (const c of closed) outcome.stoppedChannelRecordings.push(c.id);
  }

  private async stopWhere(
    m: EntityManager,
    f: { applicationId: string; channelId?: string; userId?: string; deviceId?: string; clientId?: string },
    ts: number,
    reason: string,
    outcome: Outcome,
  ): Promise<void> {
    const conditions = ['application_id = $1', 'stop_timestamp IS NULL'];
    const params: unknown[] = [f.applicationId];
    for (const [column, value] of [
      ['channel_id', f.channelId],
      ['user_id', f.userId],
      ['device_id', f.deviceId],
      ['client_id', f.clientId],
    ] as const) {
      if (value === undefined) continue;
      params.push(value);
      conditions.push(`${column} = $${params.length}`);
    }
    const channels = (await m.query(
      `SELECT DISTINCT channel_id FROM ${CONNECTION_RECORDING_TABLE} WHERE ${conditions.join(' AND ')} ORDER BY channel_id`,
      params,
    )) as Array<{ channel_id: string }>;
    for (const { channel_id } of channels) {
      await lockChannel(m, f.applicationId, channel_id);
      const rows = (await m.query(
        `SELECT * FROM ${CONNECTION_RECORDING_TABLE} WHERE ${conditions.join(' AND ')} AND channel_id = $${params.length + 1} FOR UPDATE`,
        [...params, channel_id],
      )) as ConnectionRecordingRow[];
      for (const row of rows)
        if (ts >= Number(row.start_timestamp)) await this.stopConnection(m, row, ts, reason, false, outcome);
    }
  }

  /**
   * Closes an open connection recording whose connection is gone (orphan): stop time = its last
   * event, marked `orphaned` (and in `metadata`). Returns false when it was no longer open.
   */
  async closeOrphan(connectionRecordingId: string, reason: string): Promise<Outcome> {
    const outcome: Outcome = { stoppedChannelRecordings: [] };
    await this.ds.transaction(async (m) => {
      const [peek] = (await m.query(
        `SELECT application_id, channel_id FROM ${CONNECTION_RECORDING_TABLE} WHERE id = $1`,
        [connectionRecordingId],
      )) as Array<{ application_id: string; channel_id: string }>;
      if (!peek) return;
      await lockChannel(m, peek.application_id, peek.channel_id);
      const [row] = (await m.query(
        `SELECT * FROM ${CONNECTION_RECORDING_TABLE} WHERE id = $1 AND stop_timestamp IS NULL FOR UPDATE`,
        [connectionRecordingId],
      )) as ConnectionRecordingRow[];
      if (!row) return;
      await this.stopConnection(m, row, Number(row.last_event_on), reason, true, outcome);
    });
    return outcome;
  }

  /** The runtime still knows the connection and records it: it is not an orphan; remember we checked. */
  async touch(connectionRecordingId: string): Promise<void> {
    await this.ds.query(
      `UPDATE ${CONNECTION_RECORDING_TABLE} SET last_seen_on = GREATEST(last_seen_on, $2) WHERE id = $1 AND stop_timestamp IS NULL`,
      [connectionRecordingId, Date.now()],
    );
  }
}
