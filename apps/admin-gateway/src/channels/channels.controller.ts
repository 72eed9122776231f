import { Controller, Delete, HttpCode, Patch, Post } from '@nestjs/common';
import {
  ChannelPatch,
  ChannelSnapshot,
  MessageBody,
  type CallerScope,
  type AppRef,
  type ChannelRef,
  type ClientRef,
} from '@switchboard/contracts';
import { ApiDoc } from '@switchboard/service-kit';
import { Scope } from '../auth/scope.decorator.js';
import { ChannelSnapshotList } from '../http/doc-schemas.js';
import { Ids, ValidBody } from '../http/params.js';
import { ADMIN_PREFIXES } from '../http/prefixes.js';
import { APPLICATION_PATH, CHANNEL_PATH, READ_ERRORS, CLIENT_SUBPATH, WRITE_ERRORS, GetJson } from '../http/routes.js';
import { RuntimeClient } from '../runtime/runtime.client.js';

const tags = ['Channels'];

@Controller([...ADMIN_PREFIXES])
export class ChannelsController {
  constructor(private readonly runtime: RuntimeClient) {}

  @GetJson(`${APPLICATION_PATH}/channels`)
  @ApiDoc({
    summary: 'List the active channels of an application',
    tags,
    response: ChannelSnapshotList,
    errors: READ_ERRORS,
  })
  list(@Scope() scope: CallerScope, @Ids() ids: AppRef) {
    return this.runtime.query(scope, 'channels.list', ids);
  }

  @GetJson(CHANNEL_PATH)
  @ApiDoc({ summary: 'Snapshot of a channel', tags, response: ChannelSnapshot, errors: READ_ERRORS })
  get(@Scope() scope: CallerScope, @Ids() ids: ChannelRef) {
    return this.runtime.query(scope, 'channel.get', ids);
  }

  @Patch(CHANNEL_PATH)
  @HttpCode(204)
  @ApiDoc({
    summary: 'Update a channel: recording, mute and unmute settings of everyone in it except the excluded',
    tags,
    body: ChannelPatch,
    status: 204,
    errors: WRITE_ERRORS,
  })
  async update(@Scope() scope: CallerScope, @Ids() ids: ChannelRef, @ValidBody(ChannelPatch) patch: ChannelPatch) {
    await this.runtime.command(scope, { kind: 'update', origin: 'api', target: { level: 'channel', ...ids, patch } });
  }

  @Delete(CHANNEL_PATH)
  @HttpCode(204)
  @ApiDoc({ summary: 'Kick everyone out of a channel', tags, status: 204, errors: READ_ERRORS })
  async kick(@Scope() scope: CallerScope, @Ids() ids: ChannelRef) {
    await this.runtime.command(scope, { kind: 'kick', origin: 'api', target: { level: 'channel', ...ids } });
  }

  @Post(`${CHANNEL_PATH}/message`)
  @HttpCode(204)
  @ApiDoc({
    summary: 'Send a server message to every client in a channel',
    tags,
    body: MessageBody,
    status: 204,
    errors: WRITE_ERRORS,
  })
  async message(@Scope() scope: CallerScope, @Ids() ids: ChannelRef, @ValidBody(MessageBody) message: MessageBody) {
    await this.runtime.command(scope, {
      kind: 'message',
      origin: 'api',
      target: { level: 'channel', ...ids },
      message,
    });
  }

  @GetJson(`${APPLICATION_PATH}/${CLIENT_SUBPATH}/channels`)
  @ApiDoc({
    summary: 'List the channels a client has joined',
    tags,
    response: ChannelSnapshotList,
    errors: READ_ERRORS,
  })
  ofClient(@Scope() scope: CallerScope, @Ids() ids: ClientRef) {
    return this.runtime.query(scope, 'client.channels', ids);
  }
}
