import { Inject, Injectable } from '@nestjs/common';
import {
  DomainError,
  type CallerScope,
  type MuxJson,
  type MuxJsonConnection,
  type RecordingQuery,
  type RecordingQueryKind,
  type RecordingQueryOf,
  type RecordingQueryResults,
  type RecordingTarget,
} from '@switchboard/contracts';
import { RecordingPaths, audioBase, videoBase } from '../files/paths.js';
import { ChannelRecordingModel, ConnectionRecordingModel, odataPage, parseOptions, project } from './odata.js';
import {
  CONNECTION_RECORDING_TABLE,
  CHANNEL_RECORDING_TABLE,
  RecordingsStore,
  type ConnectionFilter,
} from './recordings.store.js';
import {
  isoDateOrNull,
  toConnectionRecording,
  toManagementChannelRecording,
  type ChannelRecordingRow,
  type ConnectionRecordingRow,
  type RecordingUpdateRow,
} from './rows.js';
import { applyScope, Where } from './sql.js';

type Handler<K extends RecordingQueryKind> = (
  scope: CallerScope,
  q: RecordingQueryOf<K>,
) => Promise<RecordingQueryResults[K]>;
type Handlers = { [K in RecordingQueryKind]: Handler<K> };

const connectionFilter = (q: Partial<ConnectionFilter> & { applicationId: string }): ConnectionFilter => ({
  applicationId: q.applicationId,
  ...(q.channelId !== undefined ? { channelId: q.channelId } : {}),
  ...(q.channelRecordingId !== undefined ? { channelRecordingId: q.channelRecordingId } : {}),
  ...(q.userId !== undefined ? { userId: q.userId } : {}),
  ...(q.deviceId !== undefined ? { deviceId: q.deviceId } : {}),
  ...(q.clientId !== undefined ? { clientId: q.clientId } : {}),
  ...(q.connectionId !== undefined ? { connectionId: q.connectionId } : {}),
});

/** Answers every kind of `recording-service.v1.query`. */
@Injectable()
export class RecordingsQueryService {
  constructor(
    private readonly store: RecordingsStore,
    @Inject(RecordingPaths) private readonly paths: RecordingPaths,
  ) {}

  run(scope: CallerScope, query: RecordingQuery): Promise<unknown> {
    const handler = this.handlers[query.kind] as Handler<RecordingQueryKind>;
    return handler(scope, query as never);
  }

  private readonly listConnections = (
    scope: CallerScope,
    q: Partial<ConnectionFilter> & {
      applicationId: string;
      timestampMin?: number;
      timestampMax?: number;
      skip?: number;
      take?: number;
    },
  ) => this.store.listConnectionRecordings(scope, connectionFilter(q), q);

  private readonly handlers: Handlers = {
    'channelRecordings.list': (s, q) => this.store.listChannelRecordings(s, q.applicationId, undefined, q),
    'channelRecordings.count': (s, q) => this.store.countChannelRecordings(s, q.applicationId, undefined, q),
    'channel.recordings.list': (s, q) => this.store.listChannelRecordings(s, q.applicationId, q.channelId, q),
    'channel.recordings.count': (s, q) => this.store.countChannelRecordings(s, q.applicationId, q.channelId, q),
    'channelRecording.get': async (s, q) => (await this.store.channelRecords([await this.store.channelRow(s, q)]))[0]!,
    'channelRecording.muxJson': async (s, q) => JSON.stringify(await this.muxJson(await this.store.channelRow(s, q))),
    'channelRecording.url': async (s, q) =>
      this.required(this.store.channelUrls(await this.store.channelRow(s, q)).url, 'muxed file'),
    'channelRecording.audioUrl': async (s, q) =>
      this.required(this.store.channelUrls(await this.store.channelRow(s, q)).audioUrl, 'audio file'),
    'channelRecording.videoUrl': async (s, q) =>
      this.required(this.store.channelUrls(await this.store.channelRow(s, q)).videoUrl, 'video file'),

    'application.connectionRecordings.list': this.listConnections,
    'user.connectionRecordings.list': this.listConnections,
    'device.connectionRecordings.list': this.listConnections,
    'client.connectionRecordings.list': this.listConnections,
    'channel.connectionRecordings.list': this.listConnections,
    'channel.user.connectionRecordings.list': this.listConnections,
    'channel.device.connectionRecordings.list': this.listConnections,
    'channel.client.connectionRecordings.list': this.listConnections,
    'connection.connectionRecordings.list': this.listConnections,
    'channelRecording.connectionRecordings.list': this.listConnections,
    'channelRecording.user.connectionRecordings.list': this.listConnections,
    'channelRecording.device.connectionRecordings.list': this.listConnections,
    'channelRecording.client.connectionRecordings.list': this.listConnections,
    'channelRecording.connection.connectionRecordings.list': this.listConnections,

    'connectionRecording.get': async (s, q) =>
      (await this.store.connectionRecords([await this.store.connectionRow(s, q)]))[0]!,
    'connectionRecording.muxJson': async (s, q) => {
      const row = await this.store.connectionRow(s, q);
      const parent = await this.store.channelRow(
        { ...s, operator: true },
        { applicationId: row.application_id, channelRecordingId: row.channel_recording_id },
      );
      const updates = await this.store.updatesOf([row.id]);
      return JSON.stringify(this.muxConnection(parent, row, updates.get(row.id) ?? []));
    },
    'connectionRecording.audioUrl': async (s, q) =>
      this.required(this.store.connectionUrls(await this.store.connectionRow(s, q)).audioUrl, 'audio file'),
    'connectionRecording.videoUrl': async (s, q) =>
      this.required(this.store.connectionUrls(await this.store.connectionRow(s, q)).videoUrl, 'video file'),

    'management.channelRecordings.list': async (s, q) => {
      const query = parseOptions(q.options, ChannelRecordingModel, false);
      const where = this.odataWhere(s, q.applicationId);
      const page = await odataPage(this.store.ds, ChannelRecordingModel, query, where);
      const rows = await this.rowsById<ChannelRecordingRow>(CHANNEL_RECORDING_TABLE, page.ids);
      const value = rows.map((r) =>
        project(
          toManagementChannelRecording(r, this.store.channelUrls(r)) as unknown as Record<string, unknown>,
          query,
          ChannelRecordingModel,
        ),
      );
      return page.count === undefined ? { value } : { value, '@odata.count': page.count };
    },
    'management.channelRecording.get': async (s, q) => {
      const query = parseOptions(q.options, ChannelRecordingModel, true);
      const row = await this.store.channelRow(s, q);
      return project(
        toManagementChannelRecording(row, this.store.channelUrls(row)) as unknown as Record<string, unknown>,
        query,
        ChannelRecordingModel,
      );
    },
    'management.connectionRecordings.list': async (s, q) => {
      const query = parseOptions(q.options, ConnectionRecordingModel, false);
      const where = this.odataWhere(s, q.applicationId);
      const page = await odataPage(this.store.ds, ConnectionRecordingModel, query, where);
      const rows = await this.rowsById<ConnectionRecordingRow>(CONNECTION_RECORDING_TABLE, page.ids);
      const records = await this.store.connectionRecords(rows);
      const value = records.map((r) => this.projectConnection(r as unknown as Record<string, unknown>, query));
      return page.count === undefined ? { value } : { value, '@odata.count': page.count };
    },
    'management.connectionRecording.get': async (s, q) => {
      const query = parseOptions(q.options, ConnectionRecordingModel, true);
      const [record] = await this.store.connectionRecords([await this.store.connectionRow(s, q)]);
      return this.projectConnection(record as unknown as Record<string, unknown>, query);
    },
    'management.connectionRecording.url': async (s, q) => {
      const row = await this.store.connectionRow(s, q);
      const parent = await this.store.channelRow(s, {
        applicationId: row.application_id,
        channelRecordingId: row.channel_recording_id,
      });
      return this.required(this.store.channelUrls(parent).url, 'muxed file');
    },
    'management.connectionRecording.audioUrl': async (s, q) =>
      this.required(this.store.connectionUrls(await this.store.connectionRow(s, q)).audioUrl, 'audio file'),
    'management.connectionRecording.videoUrl': async (s, q) =>
      this.required(this.store.connectionUrls(await this.store.connectionRow(s, q)).videoUrl, 'video file'),
    'storage.usedSize': (s) => this.store.usedSize(s),
    'storage.usedSize.application': (s, q) => this.store.usedSize(s, q.applicationId),
    'media.recordingTarget': (s, q) => this.target(s, q),
  };

  private required(url: string | null | undefined, what: string): string {
    if (!url) throw new DomainError('NotFound', `The recording has no ${what} (not ready yet, failed, or deleted).`);
    return url;
  }

  /** `$select` keeps `updates` when it names it (or selects everything). */
  private projectConnection(
    record: Record<string, unknown>,
    query: ReturnType<typeof parseOptions>,
  ): Record<string, unknown> {
    return project(record, query, ConnectionRecordingModel);
  }

  private odataWhere(scope: CallerScope, applicationId: string): { sql: string; params: Record<string, unknown> } {
    const params: Record<string, unknown> = { rs_app: applicationId };
    let sql = 'r.application_id = :rs_app';
    if (!scope.operator) {
      if (!scope.organizationId) return { sql: 'FALSE', params: {} };
      params.rs_org = scope.organizationId;
      sql += ' AND r.organization_id = :rs_org';
    }
    return { sql, params };
  }

  private async rowsById<T extends { id: string }>(table: string, ids: string[]): Promise<T[]> {
    if (ids.length === 0) return [];
    const rows = (await this.store.ds.query(`SELECT * FROM ${table} WHERE id = ANY($1)`, [ids])) as T[];
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => byId.get(id)).filter((r): r is T => r !== undefined);
  }

  // ---- mux JSON ------------------------------------------------------------------------------

  async muxJson(r: ChannelRecordingRow): Promise<MuxJson> {
    const children = await this.store.connectionRowsOf([r.id]);
    const updates = await this.store.updatesOf(children.map((c) => c.id));
    const start = Number(r.start_timestamp);
    const stop = r.stop_timestamp === null ? null : Number(r.stop_timestamp);
    return {
      id: r.id,
      applicationId: r.application_id,
      channelId: r.channel_id,
      startTimestamp: isoDateOrNull(start)!,
      stopTimestamp: isoDateOrNull(stop),
      durationSeconds: stop === null ? null : (stop - start) / 1000,
      layout: 'grid',
      output: { file: r.file_path, audioFile: r.audio_file_path, videoFile: r.video_file_path },
      connectionRecordings: children
        .filter((c) => !c.deleted)
        .map((c) => this.muxConnection(r, c, updates.get(c.id) ?? [])),
    };
  }

  muxConnection(
    parent: ChannelRecordingRow,
    c: ConnectionRecordingRow,
    updates: RecordingUpdateRow[],
  ): MuxJsonConnection {
    const record = toConnectionRecording(c, updates, { audioUrl: null, videoUrl: null });
    const firstFrame = Number(c.audio_first_frame_timestamp ?? c.video_first_frame_timestamp ?? c.start_timestamp);
    return {
      id: c.id,
      applicationId: c.application_id,
      channelId: c.channel_id,
      userId: c.user_id,
      deviceId: c.device_id,
      clientId: c.client_id,
      connectionId: c.connection_id,
      connectionTag: c.connection_tag,
      tag: c.tag,
      startTimestamp: record.startTimestamp,
      stopTimestamp: record.stopTimestamp,
      offsetSeconds: Math.max(0, (firstFrame - Number(parent.start_timestamp)) / 1000),
      audio: c.has_audio
        ? {
            file: c.audio_file_path,
            firstFrameTimestamp: record.audioFirstFrameTimestamp,
            lastFrameTimestamp: record.audioLastFrameTimestamp,
            content: c.audio_content,
          }
        : null,
      video: c.has_video
        ? {
            file: c.video_file_path,
            firstFrameTimestamp: record.videoFirstFrameTimestamp,
            lastFrameTimestamp: record.videoLastFrameTimestamp,
            content: c.video_content,
            delay: c.video_delay,
          }
        : null,
      updates: record.updates.map(({ connectionRecordingId: _id, ...u }) => u),
    };
  }

  // ---- media server handshake ----------------------------------------------------------------

  private async target(
    scope: CallerScope,
    q: { applicationId: string; channelId: string; connectionId: string },
  ): Promise<RecordingTarget> {
    const where = new Where()
      .eq('c.application_id', q.applicationId)
      .eq('c.channel_id', q.channelId)
      .eq('c.connection_id', q.connectionId);
    applyScope(where, scope, 'c');
    const rows = (await this.store.ds.query(
      `SELECT c.* FROM ${CONNECTION_RECORDING_TABLE} c ${where.sql()} ORDER BY (c.stop_timestamp IS NULL) DESC, c.start_timestamp DESC LIMIT 1`,
      where.params,
    )) as ConnectionRecordingRow[];
    const c = rows[0];
    if (!c)
      throw new DomainError('NotFound', `Connection ${q.connectionId} of channel ${q.channelId} has no recording.`);
    const updates = (await this.store.updatesOf([c.id])).get(c.id) ?? [];
    return {
      connectionRecordingId: c.id,
      channelRecordingId: c.channel_recording_id,
      directory: this.paths.workDir(c.application_id, c.channel_id, c.channel_recording_id),
      audioBase: audioBase(c.id),
      videoBase: videoBase(c.id),
      hasAudio: c.has_audio,
      hasVideo: c.has_video,
      startTimestamp: Number(c.start_timestamp),
      stopTimestamp: c.stop_timestamp === null ? null : Number(c.stop_timestamp),
      updates: updates.map((u) => ({
        timestamp: Number(u.timestamp),
        audioMuted: u.audio_muted,
        videoMuted: u.video_muted,
        audioDisabled: u.audio_disabled,
        videoDisabled: u.video_disabled,
      })),
    };
  }
}
