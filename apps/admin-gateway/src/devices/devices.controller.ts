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
import { APPLICATION_PATH, CHANNEL_PATH, DEVICE_SUBPATH, GetJson, routeDocs } from '../http/routes.js';
import { RuntimeClient } from '../runtime/runtime.client.js';

const doc = routeDocs('Devices');

@Controller([...ADMIN_PREFIXES])
export class DevicesController {
  constructor(private readonly runtime: RuntimeClient) {}

  @GetJson(`${APPLICATION_PATH}/users/:userId/devices`)
  @ApiDoc(doc.read('List the devices of a user', DeviceInfoList))
  listOfUser(@Scope() scope: CallerScope, @Ids() ids: UserRef) {
    return this.runtime.query(scope, 'user.devices', ids);
  }

  @GetJson(`${APPLICATION_PATH}/${DEVICE_SUBPATH}`)
  @ApiDoc(doc.read('Get device info', DeviceInfo))
  get(@Scope() scope: CallerScope, @Ids() ids: DeviceRef) {
    return this.runtime.query(scope, 'device.get', ids);
  }

  @Post(`${APPLICATION_PATH}/${DEVICE_SUBPATH}/message`)
  @HttpCode(204)
  @ApiDoc(doc.message('Send a server message to a device'))
  message(@Scope() scope: CallerScope, @Ids() ids: DeviceRef, @ValidBody(MessageBody) message: MessageBody) {
    return this.runtime.message(scope, { level: 'device', ...ids }, message);
  }

  @GetJson(`${CHANNEL_PATH}/devices`)
  @ApiDoc(doc.read('List the devices in a channel', DeviceInChannelSnapshotList))
  listInChannel(@Scope() scope: CallerScope, @Ids() ids: ChannelRef) {
    return this.runtime.query(scope, 'channel.devices', ids);
  }

  @GetJson(`${CHANNEL_PATH}/users/:userId/devices`)
  @ApiDoc(doc.read('List the devices in a channel owned by a user', DeviceInChannelSnapshotList))
  listInChannelOfUser(@Scope() scope: CallerScope, @Ids() ids: ChannelUserRef) {
    return this.runtime.query(scope, 'channel.user.devices', ids);
  }

  @GetJson(`${CHANNEL_PATH}/${DEVICE_SUBPATH}`)
  @ApiDoc(doc.read('Snapshot of a device in a channel', DeviceInChannelSnapshot))
  getInChannel(@Scope() scope: CallerScope, @Ids() ids: ChannelDeviceRef) {
    return this.runtime.query(scope, 'channel.device.get', ids);
  }

  @Patch(`${CHANNEL_PATH}/${DEVICE_SUBPATH}`)
  @HttpCode(204)
  @ApiDoc(doc.update('Update a device in a channel', DeviceInChannelPatch))
  updateInChannel(
    @Scope() scope: CallerScope,
    @Ids() ids: ChannelDeviceRef,
    @ValidBody(DeviceInChannelPatch) patch: DeviceInChannelPatch,
  ) {
    return this.runtime.update(scope, { level: 'channel.device', ...ids, patch });
  }

  @Delete(`${CHANNEL_PATH}/${DEVICE_SUBPATH}`)
  @HttpCode(204)
  @ApiDoc(doc.kick('Kick a device out of a channel'))
  kick(@Scope() scope: CallerScope, @Ids() ids: ChannelDeviceRef) {
    return this.runtime.kick(scope, { level: 'channel.device', ...ids });
  }

  @Post(`${CHANNEL_PATH}/${DEVICE_SUBPATH}/message`)
  @HttpCode(204)
  @ApiDoc(doc.message('Send a server message to a device in a channel'))
  messageInChannel(
    @Scope() scope: CallerScope,
    @Ids() ids: ChannelDeviceRef,
    @ValidBody(MessageBody) message: MessageBody,
  ) {
    return this.runtime.message(scope, { level: 'channel.device', ...ids }, message);
  }
}
