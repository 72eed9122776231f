import { Controller, Delete, HttpCode, Patch, Post } from '@nestjs/common';
import {
  ClientInChannelPatch,
  ClientInChannelSnapshot,
  ClientInfo,
  ClientPatch,
  MessageBody,
  type CallerScope,
} from '@switchboard/contracts';
import { ApiDoc } from '@switchboard/service-kit';
import { Scope } from '../auth/scope.decorator.js';
import { ClientInChannelSnapshotList, ClientInfoList } from '../http/doc-schemas.js';
import { Ids, ValidBody } from '../http/params.js';
import { ADMIN_PREFIXES } from '../http/prefixes.js';
import {
  A,
  C,
  READ_ERRORS,
  UDC,
  WRITE_ERRORS,
  GetJson,
  type ChannelClientIds,
  type ChannelDeviceIds,
  type ChannelIds,
  type ClientIds,
  type DeviceIds,
} from '../http/routes.js';
import { RuntimeClient } from '../runtime/runtime.client.js';

const tags = ['Clients'];

@Controller([...ADMIN_PREFIXES])
export class ClientsController {
  constructor(private readonly runtime: RuntimeClient) {}

  @GetJson(`${A}/users/:userId/devices/:deviceId/clients`)
  @ApiDoc({ summary: 'List all clients owned by a device', tags, response: ClientInfoList, errors: READ_ERRORS })
  listOfDevice(@Scope() scope: CallerScope, @Ids() ids: DeviceIds) {
    return this.runtime.query(scope, 'device.clients', ids);
  }

  @GetJson(`${A}/${UDC}`)
  @ApiDoc({ summary: 'Get client info', tags, response: ClientInfo, errors: READ_ERRORS })
  get(@Scope() scope: CallerScope, @Ids() ids: ClientIds) {
    return this.runtime.query(scope, 'client.get', ids);
  }

  @Patch(`${A}/${UDC}`)
  @HttpCode(204)
  @ApiDoc({
    summary: 'Update a client: aliases, tag and roles',
    tags,
    body: ClientPatch,
    status: 204,
    errors: WRITE_ERRORS,
  })
  async update(@Scope() scope: CallerScope, @Ids() ids: ClientIds, @ValidBody(ClientPatch) patch: ClientPatch) {
    await this.runtime.command(scope, { kind: 'update', origin: 'api', target: { level: 'client', ...ids, patch } });
  }

  @Post(`${A}/${UDC}/message`)
  @HttpCode(204)
  @ApiDoc({ summary: 'Send a server message to a client', tags, body: MessageBody, status: 204, errors: WRITE_ERRORS })
  async message(@Scope() scope: CallerScope, @Ids() ids: ClientIds, @ValidBody(MessageBody) message: MessageBody) {
    await this.runtime.command(scope, { kind: 'message', origin: 'api', target: { level: 'client', ...ids }, message });
  }

  @GetJson(`${C}/clients`)
  @ApiDoc({
    summary: 'List the clients in a channel',
    tags,
    response: ClientInChannelSnapshotList,
    errors: READ_ERRORS,
  })
  listInChannel(@Scope() scope: CallerScope, @Ids() ids: ChannelIds) {
    return this.runtime.query(scope, 'channel.clients', ids);
  }

  @GetJson(`${C}/users/:userId/devices/:deviceId/clients`)
  @ApiDoc({
    summary: 'List the clients in a channel owned by a device',
    tags,
    response: ClientInChannelSnapshotList,
    errors: READ_ERRORS,
  })
  listInChannelOfDevice(@Scope() scope: CallerScope, @Ids() ids: ChannelDeviceIds) {
    return this.runtime.query(scope, 'channel.device.clients', ids);
  }

  @GetJson(`${C}/${UDC}`)
  @ApiDoc({
    summary: 'Snapshot of a client in a channel',
    tags,
    response: ClientInChannelSnapshot,
    errors: READ_ERRORS,
  })
  getInChannel(@Scope() scope: CallerScope, @Ids() ids: ChannelClientIds) {
    return this.runtime.query(scope, 'channel.client.get', ids);
  }

  @Patch(`${C}/${UDC}`)
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
    @Ids() ids: ChannelClientIds,
    @ValidBody(ClientInChannelPatch) patch: ClientInChannelPatch,
  ) {
    await this.runtime.command(scope, {
      kind: 'update',
      origin: 'api',
      target: { level: 'channel.client', ...ids, patch },
    });
  }

  @Delete(`${C}/${UDC}`)
  @HttpCode(204)
  @ApiDoc({ summary: 'Kick a client out of a channel', tags, status: 204, errors: READ_ERRORS })
  async kick(@Scope() scope: CallerScope, @Ids() ids: ChannelClientIds) {
    await this.runtime.command(scope, { kind: 'kick', origin: 'api', target: { level: 'channel.client', ...ids } });
  }

  @Post(`${C}/${UDC}/message`)
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
    @Ids() ids: ChannelClientIds,
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
