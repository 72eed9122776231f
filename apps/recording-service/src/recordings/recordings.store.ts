import { Inject, Injectable } from '@nestjs/common';
import {
  DEFAULT_TAKE,
  DomainError,
  type CallerScope,
  type ChannelRecording,
  type ConnectionRecording,
} from '@switchboard/contracts';
import { DataSource, type EntityManager } from 'typeorm';
import { UrlSigner } from '../files/url-signer.js';
import {
  toChannelRecording,
  toConnectionRecording,
  type ChannelRecordingRow,
  type ConnectionRecordingRow,
  type RecordUrls,
  type RecordingUpdateRow,
} from './rows.js';
import { applyScope, applyWindow, Where, type TimeWindow } from './sql.js';

export interface ListWindow extends TimeWindow {
  skip?: number;
  take?: number;
}

/** Which connection recordings a list selects (absent fields select all). */
export interface ConnectionFilter {
  applicationId: string;
  channelId?: string;
  channelRecordingId?: string;
  userId?: string;
  deviceId?: string;
  clientId?: string;
  connectionId?: string;
}

type Db = DataSource | EntityManager;

export const CHANNEL_RECORDING_TABLE = 'recording.channel_recording';
export const CONNECTION_RECORDING_TABLE = 'recording.connection_recording';
export const RECORDING_UPDATE_TABLE = 'recording.recording_update';
export const CONNECTION_END_TABLE = 'recording.connection_end';

/** Reads of channel and connection recordings, tenancy applied, mapped to the contract records. */
@Injectable()
export class RecordingsStore {
  constructor(
    readonly ds: DataSource,
    @Inject(UrlSigner) private readonly signer: UrlSigner,
  ) {}

  // ---- URLs ----------------------------------------------------------------------------------

  channelUrls(r: ChannelRecordingRow): RecordUrls {
    const live = !r.deleted;
    return {
      url: live && r.ready && r.file_path ? this.signer.url('channel', r.id) : null,
      audioUrl: live && r.audio_ready && r.audio_file_path ? this.signer.url('channel.audio', r.id) : null,
      videoUrl: live && r.video_ready && r.video_file_path ? this.signer.url('channel.video', r.id) : null,
    };
  }

  connectionUrls(r: ConnectionRecordingRow): RecordUrls {
    const live = !r.deleted;
    return {
      audioUrl: live && r.audio_ready && r.audio_file_path ? this.signer.url('connection.audio', r.id) : null,
      videoUrl: live && r.video_ready && r.video_file_path ? this.signer.url('connection.video', r.id) : null,
    };
  }

  // ---- rows ----------------------------------------------------------------------------------

  async channelRow(
    scope: CallerScope,
    ref: { applicationId: string; channelId?: string; channelRecordingId: string },
    db: Db = this.ds,
  ): Promise<ChannelRecordingRow> {
    const where = new Where();
    where
      .raw(`r.id = ${where.bind(ref.channelRecordingId)}`)
      .eq('r.application_id', ref.applicationId)
      .eq('r.channel_id', ref.channelId);
    applyScope(where, scope, 'r');
    const rows = (await db.query(
      `SELECT r.* FROM ${CHANNEL_RECORDING_TABLE} r ${where.sql()}`,
      where.params,
    )) as ChannelRecordingRow[];
    if (!rows[0])
      throw new DomainError(
        'NotFound',
        `No channel recording ${ref.channelRecordingId} in application ${ref.applicationId}${ref.channelId !== undefined ? `, channel ${ref.channelId}` : ''}.`,
      );
    return rows[0];
  }

  async connectionRow(
    scope: CallerScope,
    ref: ConnectionFilter & { connectionRecordingId: string },
    db: Db = this.ds,
  ): Promise<ConnectionRecordingRow> {
    const where = new Where();
    where.raw(`c.id = ${where.bind(ref.connectionRecordingId)}`);
    this.connectionFilter(where, ref);
    applyScope(where, scope, 'c');
    const rows = (await db.query(
      `SELECT c.* FROM ${CONNECTION_RECORDING_TABLE} c ${where.sql()}`,
      where.params,
    )) as ConnectionRecordingRow[];
    if (!rows[0])
      throw new DomainError(
        'NotFound',
        `No connection recording ${ref.connectionRecordingId} in application ${ref.applicationId}.`,
      );
    return rows[0];
  }

  async connectionRowsOf(channelRecordingIds: string[], db: Db = this.ds): Promise<ConnectionRecordingRow[]> {
    if (channelRecordingIds.length === 0) return [];
    return (await db.query(
      `SELECT * FROM ${CONNECTION_RECORDING_TABLE} WHERE channel_recording_id = ANY($1) ORDER BY start_timestamp ASC, id ASC`,
      [channelRecordingIds],
    )) as ConnectionRecordingRow[];
  }

  async updatesOf(connectionRecordingIds: string[], db: Db = this.ds): Promise<Map<string, RecordingUpdateRow[]>> {
    const out = new Map<string, RecordingUpdateRow[]>();
    if (connectionRecordingIds.length === 0) return out;
    const rows = (await db.query(
      `SELECT * FROM ${RECORDING_UPDATE_TABLE} WHERE connection_recording_id = ANY($1) ORDER BY connection_recording_id, index`,
      [connectionRecordingIds],
    )) as RecordingUpdateRow[];
    for (const u of rows) {
      let list = out.get(u.connection_recording_id);
      if (!list) out.set(u.connection_recording_id, (list = []));
      list.push(u);
    }
    return out;
  }

  // ---- records -------------------------------------------------------------------------------

  async connectionRecords(rows: ConnectionRecordingRow[]): Promise<ConnectionRecording[]> {
    const updates = await this.updatesOf(rows.map((r) => r.id));
    return rows.map((r) => toConnectionRecording(r, updates.get(r.id) ?? [], this.connectionUrls(r)));
  }

  async channelRecords(rows: ChannelRecordingRow[]): Promise<ChannelRecording[]> {
    const children = await this.connectionRecords(await this.connectionRowsOf(rows.map((r) => r.id)));
    const byParent = new Map<string, ConnectionRecording[]>();
    for (const c of children) {
      let list = byParent.get(c.channelRecordingId);
      if (!list) byParent.set(c.channelRecordingId, (list = []));
      list.push(c);
    }
    return rows.map((r) => toChannelRecording(r, this.channelUrls(r), byParent.get(r.id) ?? []));
  }

  // ---- interface A lists ---------------------------------------------------------------------

  private channelWhere(
    scope: CallerScope,
    applicationId: string,
    channelId: string | undefined,
    window: TimeWindow,
  ): Where {
    const where = new Where().eq('r.application_id', applicationId).eq('r.channel_id', channelId);
    applyWindow(where, window, 'r');
    return applyScope(where, scope, 'r');
  }

  async listChannelRecordings(
    scope: CallerScope,
    applicationId: string,
    channelId: string | undefined,
    window: ListWindow,
  ): Promise<ChannelRecording[]> {
    const where = this.channelWhere(scope, applicationId, channelId, window);
    const page = `LIMIT ${where.bind(window.take ?? DEFAULT_TAKE)} OFFSET ${where.bind(window.skip ?? 0)}`;
    const rows = (await this.ds.query(
      `SELECT r.* FROM ${CHANNEL_RECORDING_TABLE} r ${where.sql()} ORDER BY r.start_timestamp DESC, r.id ASC ${page}`,
      where.params,
    )) as ChannelRecordingRow[];
    return this.channelRecords(rows);
  }

  async countChannelRecordings(
    scope: CallerScope,
    applicationId: string,
    channelId: string | undefined,
    window: TimeWindow,
  ): Promise<number> {
    const where = this.channelWhere(scope, applicationId, channelId, window);
    const rows = (await this.ds.query(
      `SELECT count(*)::int AS n FROM ${CHANNEL_RECORDING_TABLE} r ${where.sql()}`,
      where.params,
    )) as Array<{
      n: number;
    }>;
    return rows[0]?.n ?? 0;
  }

  private connectionFilter(where: Where, f: ConnectionFilter): Where {
    return where
      .eq('c.application_id', f.applicationId)
      .eq('c.channel_id', f.channelId)
      .eq('c.user_id', f.userId)
      .eq('c.device_id', f.deviceId)
      .eq('c.client_id', f.clientId)
      .eq('c.connection_id', f.connectionId);
  }

  async listConnectionRecordings(
    scope: CallerScope,
    filter: ConnectionFilter,
    window: ListWindow,
  ): Promise<ConnectionRecording[]> {
    const where = new Where();
    this.connectionFilter(where, filter);
    if (filter.channelRecordingId !== undefined) {
      // The channel recording itself must exist (and be visible): 404 otherwise, not an empty list.
      await this.channelRow(scope, {
        applicationId: filter.applicationId,
        channelId: filter.channelId,
        channelRecordingId: filter.channelRecordingId,
      });
      where.raw(`c.channel_recording_id = ${where.bind(filter.channelRecordingId)}`);
    }
    applyWindow(where, window, 'c');
    applyScope(where, scope, 'c');
    const page = `LIMIT ${where.bind(window.take ?? DEFAULT_TAKE)} OFFSET ${where.bind(window.skip ?? 0)}`;
    const rows = (await this.ds.query(
      `SELECT c.* FROM ${CONNECTION_RECORDING_TABLE} c ${where.sql()} ORDER BY c.start_timestamp DESC, c.id ASC ${page}`,
      where.params,
    )) as ConnectionRecordingRow[];
    return this.connectionRecords(rows);
  }

  // ---- storage -------------------------------------------------------------------------------

  /** Bytes of the files of recordings that are not deleted (channel files and connection files). */
  async usedSize(scope: CallerScope, applicationId?: string): Promise<number> {
    const w1 = new Where().raw('NOT r.deleted').eq('r.application_id', applicationId);
    applyScope(w1, scope, 'r');
    const channel = (await this.ds.query(
      `SELECT COALESCE(sum(COALESCE(r.file_size, 0) + COALESCE(r.audio_file_size, 0) + COALESCE(r.video_file_size, 0)), 0)::text AS n FROM ${CHANNEL_RECORDING_TABLE} r ${w1.sql()}`,
      w1.params,
    )) as Array<{ n: string }>;
    const w2 = new Where().raw('NOT c.deleted').eq('c.application_id', applicationId);
    applyScope(w2, scope, 'c');
    const connection = (await this.ds.query(
      `SELECT COALESCE(sum(COALESCE(c.audio_file_size, 0) + COALESCE(c.video_file_size, 0)), 0)::text AS n FROM ${CONNECTION_RECORDING_TABLE} c ${w2.sql()}`,
      w2.params,
    )) as Array<{ n: string }>;
    return Number(channel[0]?.n ?? 0) + Number(connection[0]?.n ?? 0);
  }
}
