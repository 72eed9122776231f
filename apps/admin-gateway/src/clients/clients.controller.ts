import { Controller, Delete, HttpCode, Patch, Post } from '@nestjs/common';
import {
  ClientInChannelPatch,
  ClientInChannelSnapshot,
  ClientInfo,
  ClientPatch,
  MessageBody,
  type CallerScope,
  type ChannelClientRef,
  type ChannelDeviceRef,
  type ChannelRef,
  type ClientRef,
  type DeviceRef,
} from '@switchboard/contracts';
import { ApiDoc } from '@switchboard/service-kit';
import { Scope } from '../auth/scope.decorator.js';
import { ClientInChannelSnapshotList, ClientInfoList } from '../http/doc-schemas.js';
import { Ids, ValidBody } from '../http/params.js';
import { ADMIN_PREFIXES } from '../http/prefixes.js';
import { APPLICATION_PATH, CHANNEL_PATH, READ_ERRORS, CLIENT_SUBPATH, WRITE_ERRORS, GetJson } from '../http/routes.js';
import { RuntimeClient } from '../runtime/runtime.client.js';

const tags = ['Clients'];

@Controller([...ADMIN_PREFIXES])
export class ClientsController {
  constructor(private readonly runtime: RuntimeClient) {}

  @GetJson(`${APPLICATION_PATH}/users/:userId/devices/:deviceId/clients`)
  @ApiDoc({ summary: 'List all clients owned by a device', tags, response: ClientInfoList, errors: READ_ERRORS })
  listOfDevice(@Scope() scope: CallerScope, @Ids() ids: DeviceRef) {
    return this.runtime.query(scope, 'device.clients', ids);
  }

  @GetJson(`${APPLICATION_PATH}/${CLIENT_SUBPATH}`)
  @ApiDoc({ summary: 'Get client info', tags, response: ClientInfo, errors: READ_ERRORS })
  get(@Scope() scope: CallerScope, @Ids() ids: ClientRef) {
    return this.runtime.query(scope, 'client.get', ids);
  }

  @Patch(`${APPLICATION_PATH}/${CLIENT_SUBPATH}`)
  @HttpCode(204)
  @ApiDoc({
    summary: 'Update a client: aliases, tag and roles',
    tags,
    body: ClientPatch,
    status: 204,
    errors: WRITE_ERRORS,
  })
  async update(@Scope() scope: CallerScope, @Ids() ids: ClientRef, @ValidBody(ClientPatch) patch: ClientPatch) {
    await this.runtime.command(scope, { kind: 'update', origin: 'api', target: { level: 'client', ...ids, patch } });
  }

  @Post(`${APPLICATION_PATH}/${CLIENT_SUBPATH}/message`)
  @HttpCode(204)
  @ApiDoc({ summary: 'Send a server message to a client', tags, body: MessageBody, status: 204, errors: WRITE_ERRORS })
  async message(@Scope() scope: CallerScope, @Ids() ids: ClientRef, @ValidBody(MessageBody) message: MessageBody) {
    await this.runtime.command(scope, { kind: 'message', origin: 'api', target: { level: 'client', ...ids }, message });
  }

  @GetJson(`${CHANNEL_PATH}/clients`)
  @ApiDoc({
    summary: 'List the clients in a channel',
    tags,
    response: ClientInChannelSnapshotList,
    errors: READ_ERRORS,
  })
  listInChannel(@Scope() scope: CallerScope, @Ids() ids: ChannelRef) {
    return this.runtime.query(scope, 'channel.clients', ids);
  }

  @GetJson(`${CHANNEL_PATH}/users/:userId/devices/:deviceId/clients`)
  @ApiDoc({
    summary: 'List the clients in a channel owned by a device',
    tags,
    response: ClientInChannelSnapshotList,
    errors: READ_ERRORS,
  })
  listInChannelOfDevice(@Scope() scope: CallerScope, @Ids() ids: ChannelDeviceRef) {
    return this.runtime.query(scope, 'channel.device.clients', ids);
  }

  @GetJson(`${CHANNEL_PATH}/${CLIENT_SUBPATH}`)
  @ApiDoc({
    summary: 'Snapshot of a client in a channel',
    tags,
    response: ClientInChannelSnapshot,
    errors: READ_ERRORS,
  })
  getInChannel(@Scope() scope: CallerScope, @Ids() ids: ChannelClientRef) {
    return this.runtime.query(scope, 'channel.client.get', ids);
  }

  @Patch(`${CHANNEL_PATH}/${CLIENT_SUBPATH}`)
  @HttpCode(204)
  @ApiDoc({
    summary: 'Update a client in a channel: channel claim, recording, mute and unmute settings',
    tags,
    body: ClientInChannelPatch,
    status: 204,
    errors: WRITE_ERRORS,
  })
  async updateInChannel(
    @Scope() scope: CallerScope,
    @Ids() ids: ChannelClientRef,
    @ValidBody(ClientInChannelPatch) patch: ClientInChannelPatch,
  ) {
    await this.runtime.command(scope, {
      kind: 'update',
      origin: 'api',
      target: { level: 'channel.client', ...ids, patch },
    });
  }

  @Delete(`${CHANNEL_PATH}/${CLIENT_SUBPATH}`)
  @HttpCode(204)
  @ApiDoc({ summary: 'Kick a client out of a channel', tags, status: 204, errors: READ_ERRORS })
  async kick(@Scope() scope: CallerScope, @Ids() ids: ChannelClientRef) {
    await this.runtime.command(scope, { kind: 'kick', origin: 'api', target: { level: 'channel.client', ...ids } });
  }

  @Post(`${CHANNEL_PATH}/${CLIENT_SUBPATH}/message`)
  @HttpCode(204)
  @ApiDoc({
    summary: 'Send a server message to a client in a channel',
    tags,
    body: MessageBody,
    status: 204,
    errors: WRITE_ERRORS,
  })
  async messageInChannel(
    @Scope() scope: CallerScope,
    @Ids() ids: ChannelClientRef,
    @ValidBody(MessageBody) message: MessageBody,
  ) {
    await this.runtime.command(scope, {
      kind: 'message',
      origin: 'api',
      target: { level: 'channel.client', ...ids },
      message,
    });
  }
}
