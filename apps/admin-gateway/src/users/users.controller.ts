import { Controller, Delete, HttpCode, Patch, Post } from '@nestjs/common';
import {
  MessageBody,
  UserInChannelPatch,
  UserInChannelSnapshot,
  UserInfo,
  type CallerScope,
  type AppRef,
  type ChannelRef,
  type ChannelUserRef,
  type UserRef,
} from '@switchboard/contracts';
import { ApiDoc } from '@switchboard/service-kit';
import { Scope } from '../auth/scope.decorator.js';
import { UserInChannelSnapshotList, UserInfoList } from '../http/doc-schemas.js';
import { Ids, ValidBody } from '../http/params.js';
import { ADMIN_PREFIXES } from '../http/prefixes.js';
import { APPLICATION_PATH, CHANNEL_PATH, GetJson, routeDocs } from '../http/routes.js';
import { RuntimeClient } from '../runtime/runtime.client.js';

const doc = routeDocs('Users');

@Controller([...ADMIN_PREFIXES])
export class UsersController {
  constructor(private readonly runtime: RuntimeClient) {}

  @GetJson(`${APPLICATION_PATH}/users`)
  @ApiDoc(doc.read('List the users of an application', UserInfoList))
  list(@Scope() scope: CallerScope, @Ids() ids: AppRef) {
    return this.runtime.query(scope, 'users.list', ids);
  }

  @GetJson(`${APPLICATION_PATH}/users/:userId`)
  @ApiDoc(doc.read('Get user info', UserInfo))
  get(@Scope() scope: CallerScope, @Ids() ids: UserRef) {
    return this.runtime.query(scope, 'user.get', ids);
  }

  @Post(`${APPLICATION_PATH}/users/:userId/message`)
  @HttpCode(204)
  @ApiDoc(doc.message('Send a server message to a user'))
  message(@Scope() scope: CallerScope, @Ids() ids: UserRef, @ValidBody(MessageBody) message: MessageBody) {
    return this.runtime.message(scope, { level: 'user', ...ids }, message);
  }

  @GetJson(`${CHANNEL_PATH}/users`)
  @ApiDoc(doc.read('List the users in a channel', UserInChannelSnapshotList))
  listInChannel(@Scope() scope: CallerScope, @Ids() ids: ChannelRef) {
    return this.runtime.query(scope, 'channel.users', ids);
  }

  @GetJson(`${CHANNEL_PATH}/users/:userId`)
  @ApiDoc(doc.read('Snapshot of a user in a channel', UserInChannelSnapshot))
  getInChannel(@Scope() scope: CallerScope, @Ids() ids: ChannelUserRef) {
    return this.runtime.query(scope, 'channel.user.get', ids);
  }

  @Patch(`${CHANNEL_PATH}/users/:userId`)
  @HttpCode(204)
  @ApiDoc(doc.update('Update a user in a channel', UserInChannelPatch))
  updateInChannel(
    @Scope() scope: CallerScope,
    @Ids() ids: ChannelUserRef,
    @ValidBody(UserInChannelPatch) patch: UserInChannelPatch,
  ) {
    return this.runtime.update(scope, { level: 'channel.user', ...ids, patch });
  }

  @Delete(`${CHANNEL_PATH}/users/:userId`)
  @HttpCode(204)
  @ApiDoc(doc.kick('Kick a user out of a channel'))
  kick(@Scope() scope: CallerScope, @Ids() ids: ChannelUserRef) {
    return this.runtime.kick(scope, { level: 'channel.user', ...ids });
  }

  @Post(`${CHANNEL_PATH}/users/:userId/message`)
  @HttpCode(204)
  @ApiDoc(doc.message('Send a server message to a user in a channel'))
  messageInChannel(
    @Scope() scope: CallerScope,
    @Ids() ids: ChannelUserRef,
    @ValidBody(MessageBody) message: MessageBody,
  ) {
    return this.runtime.message(scope, { level: 'channel.user', ...ids }, message);
  }
}
