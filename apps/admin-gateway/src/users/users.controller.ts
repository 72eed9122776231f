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
import { APPLICATION_PATH, CHANNEL_PATH, READ_ERRORS, WRITE_ERRORS, GetJson } from '../http/routes.js';
import { RuntimeClient } from '../runtime/runtime.client.js';

const tags = ['Users'];

@Controller([...ADMIN_PREFIXES])
export class UsersController {
  constructor(private readonly runtime: RuntimeClient) {}

  @GetJson(`${APPLICATION_PATH}/users`)
  @ApiDoc({ summary: 'List the users of an application', tags, response: UserInfoList, errors: READ_ERRORS })
  list(@Scope() scope: CallerScope, @Ids() ids: AppRef) {
    return this.runtime.query(scope, 'users.list', ids);
  }

  @GetJson(`${APPLICATION_PATH}/users/:userId`)
  @ApiDoc({ summary: 'Get user info', tags, response: UserInfo, errors: READ_ERRORS })
  get(@Scope() scope: CallerScope, @Ids() ids: UserRef) {
    return this.runtime.query(scope, 'user.get', ids);
  }

  @Post(`${APPLICATION_PATH}/users/:userId/message`)
  @HttpCode(204)
  @ApiDoc({ summary: 'Send a server message to a user', tags, body: MessageBody, status: 204, errors: WRITE_ERRORS })
  async message(@Scope() scope: CallerScope, @Ids() ids: UserRef, @ValidBody(MessageBody) message: MessageBody) {
    await this.runtime.command(scope, { kind: 'message', origin: 'api', target: { level: 'user', ...ids }, message });
  }

  @GetJson(`${CHANNEL_PATH}/users`)
  @ApiDoc({ summary: 'List the users in a channel', tags, response: UserInChannelSnapshotList, errors: READ_ERRORS })
  listInChannel(@Scope() scope: CallerScope, @Ids() ids: ChannelRef) {
    return this.runtime.query(scope, 'channel.users', ids);
  }

  @GetJson(`${CHANNEL_PATH}/users/:userId`)
  @ApiDoc({ summary: 'Snapshot of a user in a channel', tags, response: UserInChannelSnapshot, errors: READ_ERRORS })
  getInChannel(@Scope() scope: CallerScope, @Ids() ids: ChannelUserRef) {
    return this.runtime.query(scope, 'channel.user.get', ids);
  }

  @Patch(`${CHANNEL_PATH}/users/:userId`)
  @HttpCode(204)
  @ApiDoc({ summary: 'Update a user in a channel', tags, body: UserInChannelPatch, status: 204, errors: WRITE_ERRORS })
  async updateInChannel(
    @Scope() scope: CallerScope,
    @Ids() ids: ChannelUserRef,
    @ValidBody(UserInChannelPatch) patch: UserInChannelPatch,
  ) {
    await this.runtime.command(scope, {
      kind: 'update',
      origin: 'api',
      target: { level: 'channel.user', ...ids, patch },
    });
  }

  @Delete(`${CHANNEL_PATH}/users/:userId`)
  @HttpCode(204)
  @ApiDoc({ summary: 'Kick a user out of a channel', tags, status: 204, errors: READ_ERRORS })
  async kick(@Scope() scope: CallerScope, @Ids() ids: ChannelUserRef) {
    await this.runtime.command(scope, { kind: 'kick', origin: 'api', target: { level: 'channel.user', ...ids } });
  }

  @Post(`${CHANNEL_PATH}/users/:userId/message`)
  @HttpCode(204)
  @ApiDoc({
    summary: 'Send a server message to a user in a channel',
    tags,
    body: MessageBody,
    status: 204,
    errors: WRITE_ERRORS,
  })
  async messageInChannel(
    @Scope() scope: CallerScope,
    @Ids() ids: ChannelUserRef,
    @ValidBody(MessageBody) message: MessageBody,
  ) {
    await this.runtime.command(scope, {
      kind: 'message',
      origin: 'api',
      target: { level: 'channel.user', ...ids },
      message,
    });
  }
}
