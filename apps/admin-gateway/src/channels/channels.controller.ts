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
import { APPLICATION_PATH, CHANNEL_PATH, CLIENT_SUBPATH, GetJson, routeDocs } from '../http/routes.js';
import { RuntimeClient } from '../runtime/runtime.client.js';

const doc = routeDocs('Channels');

@Controller([...ADMIN_PREFIXES])
export class ChannelsController {
  constructor(private readonly runtime: RuntimeClient) {}

  @GetJson(`${APPLICATION_PATH}/channels`)
  @ApiDoc(doc.read('List the active channels of an application', ChannelSnapshotList))
  list(@Scope() scope: CallerScope, @Ids() ids: AppRef) {
    return this.runtime.query(scope, 'channels.list', ids);
  }

  @GetJson(CHANNEL_PATH)
  @ApiDoc(doc.read('Snapshot of a channel', ChannelSnapshot))
  get(@Scope() scope: CallerScope, @Ids() ids: ChannelRef) {
    return this.runtime.query(scope, 'channel.get', ids);
  }

  @Patch(CHANNEL_PATH)
  @HttpCode(204)
  @ApiDoc(
    doc.update(
      'Update a channel: recording, mute and unmute settings of everyone in it except the excluded',
      ChannelPatch,
    ),
  )
  update(@Scope() scope: CallerScope, @Ids() ids: ChannelRef, @ValidBody(ChannelPatch) patch: ChannelPatch) {
    return this.runtime.update(scope, { level: 'channel', ...ids, patch });
  }

  @Delete(CHANNEL_PATH)
  @HttpCode(204)
  @ApiDoc(doc.kick('Kick everyone out of a channel'))
  kick(@Scope() scope: CallerScope, @Ids() ids: ChannelRef) {
    return this.runtime.kick(scope, { level: 'channel', ...ids });
  }

  @Post(`${CHANNEL_PATH}/message`)
  @HttpCode(204)
  @ApiDoc(doc.message('Send a server message to every client in a channel'))
  message(@Scope() scope: CallerScope, @Ids() ids: ChannelRef, @ValidBody(MessageBody) message: MessageBody) {
    return this.runtime.message(scope, { level: 'channel', ...ids }, message);
  }

  @GetJson(`${APPLICATION_PATH}/${CLIENT_SUBPATH}/channels`)
  @ApiDoc(doc.read('List the channels a client has joined', ChannelSnapshotList))
  ofClient(@Scope() scope: CallerScope, @Ids() ids: ClientRef) {
    return this.runtime.query(scope, 'client.channels', ids);
  }
}
