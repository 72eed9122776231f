import { Controller, Delete, HttpCode, Patch, Post } from '@nestjs/common';
import { ChannelPatch, ChannelSnapshot, MessageBody, type CallerScope } from '@switchboard/contracts';
import { ApiDoc } from '@switchboard/service-kit';
import { Scope } from '../auth/scope.decorator.js';
import { ChannelSnapshotList } from '../http/doc-schemas.js';
import { Ids, ValidBody } from '../http/params.js';
import { ADMIN_PREFIXES } from '../http/prefixes.js';
import {
  A,
  C,
  READ_ERRORS,
  UDC,
  WRITE_ERRORS,
  GetJson,
  type AppIds,
  type ChannelIds,
  type ClientIds,
} from '../http/routes.js';
import { RuntimeClient } from '../runtime/runtime.client.js';

const tags = ['Channels'];

@Controller([...ADMIN_PREFIXES])
export class ChannelsController {
  constructor(private readonly runtime: RuntimeClient) {}

  @GetJson(`${A}/channels`)
  @ApiDoc({
    summary: 'List the active channels of an application',
    tags,
    response: ChannelSnapshotList,
    errors: READ_ERRORS,
  })
  list(@Scope() scope: CallerScope, @Ids() ids: AppIds) {
    return this.runtime.query(scope, 'channels.list', ids);
  }

  @GetJson(C)
  @ApiDoc({ summary: 'Snapshot of a channel', tags, response: ChannelSnapshot, errors: READ_ERRORS })
  get(@Scope() scope: CallerScope, @Ids() ids: ChannelIds) {
    return this.runtime.query(scope, 'channel.get', ids);
  }

  @Patch(C)
  @HttpCode(204)
  @ApiDoc({
    summary: 'Update a channel: recording, mute and unmute settings of everyone in it except the excluded',
    tags,
    body: ChannelPatch,
    status: 204,
    errors: WRITE_ERRORS,
  })
  async update(@Scope() scope: CallerScope, @Ids() ids: ChannelIds, @ValidBody(ChannelPatch) patch: ChannelPatch) {
    await this.runtime.command(scope, { kind: 'update', origin: 'api', target: { level: 'channel', ...ids, patch } });
  }

  @Delete(C)
  @HttpCode(204)
  @ApiDoc({ summary: 'Kick everyone out of a channel', tags, status: 204, errors: READ_ERRORS })
  async kick(@Scope() scope: CallerScope, @Ids() ids: ChannelIds) {
    await this.runtime.command(scope, { kind: 'kick', origin: 'api', target: { level: 'channel', ...ids } });
  }

  @Post(`${C}/message`)
  @HttpCode(204)
  @ApiDoc({
    summary: 'Send a server message to every client in a channel',
    tags,
    body: MessageBody,
    status: 204,
    errors: WRITE_ERRORS,
  })
  async message(@Scope() scope: CallerScope, @Ids() ids: ChannelIds, @ValidBody(MessageBody) message: MessageBody) {
    await this.runtime.command(scope, {
      kind: 'message',
      origin: 'api',
      target: { level: 'channel', ...ids },
      message,
    });
  }

  @GetJson(`${A}/${UDC}/channels`)
  @ApiDoc({
    summary: 'List the channels a client has joined',
    tags,
    response: ChannelSnapshotList,
    errors: READ_ERRORS,
  })
  ofClient(@Scope() scope: CallerScope, @Ids() ids: ClientIds) {
    return this.runtime.query(scope, 'client.channels', ids);
  }
}
