import { Controller, Get, Inject, Param, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { DataSource } from 'typeorm';
import { CONNECTION_RECORDING_TABLE, CHANNEL_RECORDING_TABLE } from '../recordings/recordings.store.js';
import { STORAGE, type StorageTarget } from './storage.js';
import { UrlSigner, type FileGrant } from './url-signer.js';

/**
 * `GET /files/<token>` (and HEAD): streams a recording file named by a signed, unexpired token (see
 * UrlSigner) from the storage target, with Content-Length, Accept-Ranges and single-range requests
 * (206, or 416 outside the file). An invalid or expired token, or a file that is gone (deleted
 * recording), answers 404.
 */
@Controller('files')
export class FilesController {
  constructor(
    private readonly ds: DataSource,
    @Inject(UrlSigner) private readonly signer: UrlSigner,
    @Inject(STORAGE) private readonly storage: StorageTarget,
  ) {}

  @Get(':token')
  async get(@Param('token') token: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const grant = this.signer.verify(token);
    const location = grant ? await this.locationOf(grant) : null;
    const opened = location ? await this.storage.open(location, request.headers.range) : null;
    if (!opened) {
      await reply
        .status(404)
        .header('content-type', 'application/json; charset=utf-8')
        .send({ code: 'NotFound', message: 'No such file, or the link expired.' });
      return;
    }
    void reply.status(opened.status).headers({ ...opened.headers, 'cache-control': 'private, max-age=0' });
    if (request.method === 'HEAD' || !opened.body) {
      opened.body?.destroy();
      // An (empty) stream keeps the Content-Length set above; Fastify's HEAD handling would reset it to 0 otherwise.
      await reply.send(Readable.from([]));
      return;
    }
    await reply.send(opened.body);
  }

  private async locationOf(g: FileGrant): Promise<string | null> {
    const [table, column, ready] =
      g.kind === 'channel'
        ? [CHANNEL_RECORDING_TABLE, 'file_path', 'ready']
        : g.kind === 'channel.audio'
          ? [CHANNEL_RECORDING_TABLE, 'audio_file_path', 'audio_ready']
          : g.kind === 'channel.video'
            ? [CHANNEL_RECORDING_TABLE, 'video_file_path', 'video_ready']
            : g.kind === 'connection.audio'
              ? [CONNECTION_RECORDING_TABLE, 'audio_file_path', 'audio_ready']
              : [CONNECTION_RECORDING_TABLE, 'video_file_path', 'video_ready'];
    const rows = (await this.ds.query(
      `SELECT ${column} AS path FROM ${table} WHERE id = $1 AND NOT deleted AND ${ready}`,
      [g.recordingId],
    )) as Array<{ path: string | null }>;
    return rows[0]?.path ?? null;
  }
}
