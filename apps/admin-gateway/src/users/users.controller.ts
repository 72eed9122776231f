import { Controller, Delete, HttpCode, Patch, Post } from '@nestjs/common';
import { MessageBody, UserInChannelPatch, UserInChannelSnapshot, UserInfo, type CallerScope } from '@switchboard/contracts';
import { ApiDoc } from '@switchboard/service-kit';
import { Scope } from '../auth/scope.decorator.js';
import { UserInChannelSnapshotList, UserInfoList } from '../http/doc-schemas.js';
import { IdParam, ValidBody } from '../http/params.js';
import { ADMIN_PREFIXES } from '../http/prefixes.js';
import { A, C, READ_ERRORS, WRITE_ERRORS, GetJson } from '../http/routes.js';
import { RuntimeClient } from '../runtime/runtime.client.js';

const tags = ['Users'];

@Controller([...ADMIN_PREFIXES])
export class UsersController {
  constructor(private readonly runtime: RuntimeClient) {}

  @GetJson(`${A}/users`)
  @ApiDoc({ summary: 'List the users of an application', tags, response: UserInfoList, errors: READ_ERRORS })
  list(@Scope() scope: CallerScope, @IdParam('applicationId') applicationId: string) {
    return this.runtime.query(scope, 'users.list', { applicationId });
  }

  @GetJson(`${A}/users/:userId`)
  @ApiDoc({ summary: 'Get user info', tags, response: UserInfo, errors: READ_ERRORS })
  get(@Scope() scope: CallerScope, @IdParam('applicationId') applicationId: string, @IdParam('userId') userId: string) {
    return this.runtime.query(scope, 'user.get', { applicationId, userId });
  }

  @Post(`${A}/users/:userId/message`)
  @HttpCode(204)
  @ApiDoc({ summary: 'Send a server message to a user', tags, body: MessageBody, status: 204, errors: WRITE_ERRORS })
  async message(
    @Scope() scope: CallerScope,
    @IdParam('applicationId') applicationId: string,
    @IdParam('userId') userId: string,
    @ValidBody(MessageBody) message: MessageBody,
  ) {
    await this.runtime.command(scope, { kind: 'message', origin: 'api', target: { level: 'user', applicationId, userId }, message });
  }

  @GetJson(`${C}/users`)
  @ApiDoc({ summary: 'List the users in a channel', tags, response: UserInChannelSnapshotList, errors: READ_ERRORS })
  listInChannel(@Scope() scope: CallerScope, @IdParam('applicationId') applicationId: string, @IdParam('channelId') channelId: string) {
    return this.runtime.query(scope, 'channel.users', { applicationId, channelId });
  }

  @GetJson(`${C}/users/:userId`)
  @ApiDoc({ summary: 'Snapshot of a user in a channel', tags, response: UserInChannelSnapshot, errors: READ_ERRORS })
  getInChannel(
    @Scope() scope: CallerScope,
    @IdParam('applicationId') applicationId: string,
    @IdParam('channelId') channelId: string,
    @IdParam('userId') userId: string,
  ) {
    return this.runtime.query(scope, 'channel.user.get', { applicationId, channelId, userId });
  }

  @Patch(`${C}/users/:userId`)
  @HttpCode(204)
  @ApiDoc({ summary: 'Update a user in a channel', tags, body: UserInChannelPatch, status: 204, errors: WRITE_ERRORS })
  async updateInChannel(
    @Scope() scope: CallerScope,
    @IdParam('applicationId') applicationId: string,
    @IdParam('channelId') channelId: string,
    @IdParam('userId') userId: string,
    @ValidBody(UserInChannelPatch) patch: UserInChannelPatch,
  ) {
    await this.runtime.command(scope, { kind: 'update', origin: 'api', target: { level: 'channel.user', applicationId, channelId, userId, patch } });
  }

  @Delete(`${C}/users/:userId`)
  @HttpCode(204)
  @ApiDoc({ summary: 'Kick a user out of a channel', tags, status: 204, errors: READ_ERRORS })
  async kick(
    @Scope() scope: CallerScope,
    @IdParam('applicationId') applicationId: string,
    @IdParam('channelId') channelId: string,
    @IdParam('userId') userId: string,
  ) {
    await this.runtime.command(scope, { kind: 'kick', origin: 'api', target: { level: 'channel.user', applicationId, channelId, userId } });
  }

  @Post(`${C}/users/:userId/message`)
  @HttpCode(204)
  @ApiDoc({ summary: 'Send a server message to a user in a channel', tags, body: MessageBody, status: 204, errors: WRITE_ERRORS })
  async messageInChannel(
    @Scope() scope: CallerScope,
    @IdParam('applicationId') applicationId: string,
    @IdParam('channelId') channelId: string,
    @IdParam('userId') userId: string,
    @ValidBody(MessageBody) message: MessageBody,
  ) {
    await this.runtime.command(scope, { kind: 'message', origin: 'api', target: { level: 'channel.user', applicationId, channelId, userId }, message });
  }
}
