import { Controller, Delete, HttpCode, Patch, Post } from '@nestjs/common';
import {
  DeviceInChannelPatch,
  DeviceInChannelSnapshot,
  DeviceInfo,
  MessageBody,
  type CallerScope,
  type ChannelDeviceRef,
  type ChannelRef,
  type ChannelUserRef,
  type DeviceRef,
  type UserRef,
} from '@switchboard/contracts';
import { ApiDoc } from '@switchboard/service-kit';
import { Scope } from '../auth/scope.decorator.js';
import { DeviceInChannelSnapshotList, DeviceInfoList } from '../http/doc-schemas.js';
import { Ids, ValidBody } from '../http/params.js';
import { ADMIN_PREFIXES } from '../http/prefixes.js';
import { APPLICATION_PATH, CHANNEL_PATH, DEVICE_SUBPATH, READ_ERRORS, WRITE_ERRORS, GetJson } from '../http/routes.js';
import { RuntimeClient } from '../runtime/runtime.client.js';

const tags = ['Devices'];

@Controller([...ADMIN_PREFIXES])
export class DevicesController {
  constructor(private readonly runtime: RuntimeClient) {}

  @GetJson(`${APPLICATION_PATH}/users/:userId/devices`)
  @ApiDoc({ summary: 'List the devices of a user', tags, response: DeviceInfoList, errors: READ_ERRORS })
  listOfUser(@Scope() scope: CallerScope, @Ids() ids: UserRef) {
    return this.runtime.query(scope, 'user.devices', ids);
  }

  @GetJson(`${APPLICATION_PATH}/${DEVICE_SUBPATH}`)
  @ApiDoc({ summary: 'Get device info', tags, response: DeviceInfo, errors: READ_ERRORS })
  get(@Scope() scope: CallerScope, @Ids() ids: DeviceRef) {
    return this.runtime.query(scope, 'device.get', ids);
  }

  @Post(`${APPLICATION_PATH}/${DEVICE_SUBPATH}/message`)
  @HttpCode(204)
  @ApiDoc({ summary: 'Send a server message to a device', tags, body: MessageBody, status: 204, errors: WRITE_ERRORS })
  async message(@Scope() scope: CallerScope, @Ids() ids: DeviceRef, @ValidBody(MessageBody) message: MessageBody) {
    await this.runtime.command(scope, { kind: 'message', origin: 'api', target: { level: 'device', ...ids }, message });
  }

  @GetJson(`${CHANNEL_PATH}/devices`)
  @ApiDoc({
    summary: 'List the devices in a channel',
    tags,
    response: DeviceInChannelSnapshotList,
    errors: READ_ERRORS,
  })
  listInChannel(@Scope() scope: CallerScope, @Ids() ids: ChannelRef) {
    return this.runtime.query(scope, 'channel.devices', ids);
  }

  @GetJson(`${CHANNEL_PATH}/users/:userId/devices`)
  @ApiDoc({
    summary: 'List the devices in a channel owned by a user',
    tags,
    response: DeviceInChannelSnapshotList,
    errors: READ_ERRORS,
  })
  listInChannelOfUser(@Scope() scope: CallerScope, @Ids() ids: ChannelUserRef) {
    return this.runtime.query(scope, 'channel.user.devices', ids);
  }

  @GetJson(`${CHANNEL_PATH}/${DEVICE_SUBPATH}`)
  @ApiDoc({
    summary: 'Snapshot of a device in a channel',
    tags,
    response: DeviceInChannelSnapshot,
    errors: READ_ERRORS,
  })
  getInChannel(@Scope() scope: CallerScope, @Ids() ids: ChannelDeviceRef) {
    return this.runtime.query(scope, 'channel.device.get', ids);
  }

  @Patch(`${CHANNEL_PATH}/${DEVICE_SUBPATH}`)
  @HttpCode(204)
  @ApiDoc({
    summary: 'Update a device in a channel',
    tags,
    body: DeviceInChannelPatch,
    status: 204,
    errors: WRITE_ERRORS,
  })
  async updateInChannel(
    @Scope() scope: CallerScope,
    @Ids() ids: ChannelDeviceRef,
    @ValidBody(DeviceInChannelPatch) patch: DeviceInChannelPatch,
  ) {
    await this.runtime.command(scope, {
      kind: 'update',
      origin: 'api',
      target: { level: 'channel.device', ...ids, patch },
    });
  }

  @Delete(`${CHANNEL_PATH}/${DEVICE_SUBPATH}`)
  @HttpCode(204)
  @ApiDoc({ summary: 'Kick a device out of a channel', tags, status: 204, errors: READ_ERRORS })
  async kick(@Scope() scope: CallerScope, @Ids() ids: ChannelDeviceRef) {
    await this.runtime.command(scope, { kind: 'kick', origin: 'api', target: { level: 'channel.device', ...ids } });
  }

  @Post(`${CHANNEL_PATH}/${DEVICE_SUBPATH}/message`)
  @HttpCode(204)
  @ApiDoc({
    summary: 'Send a server message to a device in a channel',
    tags,
    body: MessageBody,
    status: 204,
    errors: WRITE_ERRORS,
  })
  async messageInChannel(
    @Scope() scope: CallerScope,
    @Ids() ids: ChannelDeviceRef,
    @ValidBody(MessageBody) message: MessageBody,
  ) {
    await this.runtime.command(scope, {
      kind: 'message',
      origin: 'api',
      target: { level: 'channel.device', ...ids },
      message,
    });
  }
}
