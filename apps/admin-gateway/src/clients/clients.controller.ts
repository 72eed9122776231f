import { Controller, Delete, HttpCode, Patch, Post } from '@nestjs/common';
import { ClientInChannelPatch, ClientInChannelSnapshot, ClientInfo, ClientPatch, MessageBody, type CallerScope } from '@switchboard/contracts';
import { ApiDoc } from '@switchboard/service-kit';
import { Scope } from '../auth/scope.decorator.js';
import { ClientInChannelSnapshotList, ClientInfoList } from '../http/doc-schemas.js';
import { IdParam, ValidBody } from '../http/params.js';
import { ADMIN_PREFIXES } from '../http/prefixes.js';
import { A, C, READ_ERRORS, UDC, WRITE_ERRORS, GetJson } from '../http/routes.js';
import { RuntimeClient } from '../runtime/runtime.client.js';

const tags = ['Clients'];

@Controller([...ADMIN_PREFIXES])
export class ClientsController {
  constructor(private readonly runtime: RuntimeClient) {}

  @GetJson(`${A}/users/:userId/devices/:deviceId/clients`)
  @ApiDoc({ summary: 'List all clients owned by a device', tags, response: ClientInfoList, errors: READ_ERRORS })
  listOfDevice(@Scope() scope: CallerScope, @IdParam('applicationId') applicationId: string, @IdParam('userId') userId: string, @IdParam('deviceId') deviceId: string) {
    return this.runtime.query(scope, 'device.clients', { applicationId, userId, deviceId });
  }

  @GetJson(`${A}/${UDC}`)
  @ApiDoc({ summary: 'Get client info', tags, response: ClientInfo, errors: READ_ERRORS })
  get(
    @Scope() scope: CallerScope,
    @IdParam('applicationId') applicationId: string,
    @IdParam('userId') userId: string,
    @IdParam('deviceId') deviceId: string,
    @IdParam('clientId') clientId: string,
  ) {
    return this.runtime.query(scope, 'client.get', { applicationId, userId, deviceId, clientId });
  }

  @Patch(`${A}/${UDC}`)
  @HttpCode(204)
  @ApiDoc({ summary: 'Update a client: aliases, tag and roles', tags, body: ClientPatch, status: 204, errors: WRITE_ERRORS })
  async update(
    @Scope() scope: CallerScope,
    @IdParam('applicationId') applicationId: string,
    @IdParam('userId') userId: string,
    @IdParam('deviceId') deviceId: string,
    @IdParam('clientId') clientId: string,
    @ValidBody(ClientPatch) patch: ClientPatch,
  ) {
    await this.runtime.command(scope, { kind: 'update', origin: 'api', target: { level: 'client', applicationId, userId, deviceId, clientId, patch } });
  }

  @Post(`${A}/${UDC}/message`)
  @HttpCode(204)
  @ApiDoc({ summary: 'Send a server message to a client', tags, body: MessageBody, status: 204, errors: WRITE_ERRORS })
  async message(
    @Scope() scope: CallerScope,
    @IdParam('applicationId') applicationId: string,
    @IdParam('userId') userId: string,
    @IdParam('deviceId') deviceId: string,
    @IdParam('clientId') clientId: string,
    @ValidBody(MessageBody) message: MessageBody,
  ) {
    await this.runtime.command(scope, { kind: 'message', origin: 'api', target: { level: 'client', applicationId, userId, deviceId, clientId }, message });
  }

  @GetJson(`${C}/clients`)
  @ApiDoc({ summary: 'List the clients in a channel', tags, response: ClientInChannelSnapshotList, errors: READ_ERRORS })
  listInChannel(@Scope() scope: CallerScope, @IdParam('applicationId') applicationId: string, @IdParam('channelId') channelId: string) {
    return this.runtime.query(scope, 'channel.clients', { applicationId, channelId });
  }

  @GetJson(`${C}/users/:userId/devices/:deviceId/clients`)
  @ApiDoc({ summary: 'List the clients in a channel owned by a device', tags, response: ClientInChannelSnapshotList, errors: READ_ERRORS })
  listInChannelOfDevice(
    @Scope() scope: CallerScope,
    @IdParam('applicationId') applicationId: string,
    @IdParam('channelId') channelId: string,
    @IdParam('userId') userId: string,
    @IdParam('deviceId') deviceId: string,
  ) {
    return this.runtime.query(scope, 'channel.device.clients', { applicationId, channelId, userId, deviceId });
  }

  @GetJson(`${C}/${UDC}`)
  @ApiDoc({ summary: 'Snapshot of a client in a channel', tags, response: ClientInChannelSnapshot, errors: READ_ERRORS })
  getInChannel(
    @Scope() scope: CallerScope,
    @IdParam('applicationId') applicationId: string,
    @IdParam('channelId') channelId: string,
    @IdParam('userId') userId: string,
    @IdParam('deviceId') deviceId: string,
    @IdParam('clientId') clientId: string,
  ) {
    return this.runtime.query(scope, 'channel.client.get', { applicationId, channelId, userId, deviceId, clientId });
  }

  @Patch(`${C}/${UDC}`)
  @HttpCode(204)
  @ApiDoc({ summary: 'Update a client in a channel: channel claim, recording, mute and unmute settings', tags, body: ClientInChannelPatch, status: 204, errors: WRITE_ERRORS })
  async updateInChannel(
    @Scope() scope: CallerScope,
    @IdParam('applicationId') applicationId: string,
    @IdParam('channelId') channelId: string,
    @IdParam('userId') userId: string,
    @IdParam('deviceId') deviceId: string,
    @IdParam('clientId') clientId: string,
    @ValidBody(ClientInChannelPatch) patch: ClientInChannelPatch,
  ) {
    await this.runtime.command(scope, { kind: 'update', origin: 'api', target: { level: 'channel.client', applicationId, channelId, userId, deviceId, clientId, patch } });
  }

  @Delete(`${C}/${UDC}`)
  @HttpCode(204)
  @ApiDoc({ summary: 'Kick a client out of a channel', tags, status: 204, errors: READ_ERRORS })
  async kick(
    @Scope() scope: CallerScope,
    @IdParam('applicationId') applicationId: string,
    @IdParam('channelId') channelId: string,
    @IdParam('userId') userId: string,
    @IdParam('deviceId') deviceId: string,
    @IdParam('clientId') clientId: string,
  ) {
    await this.runtime.command(scope, { kind: 'kick', origin: 'api', target: { level: 'channel.client', applicationId, channelId, userId, deviceId, clientId } });
  }

  @Post(`${C}/${UDC}/message`)
  @HttpCode(204)
  @ApiDoc({ summary: 'Send a server message to a client in a channel', tags, body: MessageBody, status: 204, errors: WRITE_ERRORS })
  async messageInChannel(
    @Scope() scope: CallerScope,
    @IdParam('applicationId') applicationId: string,
    @IdParam('channelId') channelId: string,
    @IdParam('userId') userId: string,
    @IdParam('deviceId') deviceId: string,
    @IdParam('clientId') clientId: string,
    @ValidBody(MessageBody) message: MessageBody,
  ) {
    await this.runtime.command(scope, { kind: 'message', origin: 'api', target: { level: 'channel.client', applicationId, channelId, userId, deviceId, clientId }, message });
  }
}
