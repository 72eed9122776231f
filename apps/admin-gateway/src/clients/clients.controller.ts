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
import { APPLICATION_PATH, CHANNEL_PATH, CLIENT_SUBPATH, GetJson, routeDocs } from '../http/routes.js';
import { RuntimeClient } from '../runtime/runtime.client.js';

const doc = routeDocs('Clients');

@Controller([...ADMIN_PREFIXES])
export class ClientsController {
  constructor(private readonly runtime: RuntimeClient) {}

  @GetJson(`${APPLICATION_PATH}/users/:userId/devices/:deviceId/clients`)
  @ApiDoc(doc.read('List all clients owned by a device', ClientInfoList))
  listOfDevice(@Scope() scope: CallerScope, @Ids() ids: DeviceRef) {
    return this.runtime.query(scope, 'device.clients', ids);
  }

  @GetJson(`${APPLICATION_PATH}/${CLIENT_SUBPATH}`)
  @ApiDoc(doc.read('Get client info', ClientInfo))
  get(@Scope() scope: CallerScope, @Ids() ids: ClientRef) {
    return this.runtime.query(scope, 'client.get', ids);
  }

  @Patch(`${APPLICATION_PATH}/${CLIENT_SUBPATH}`)
  @HttpCode(204)
  @ApiDoc(doc.update('Update a client: aliases, tag and roles', ClientPatch))
  update(@Scope() scope: CallerScope, @Ids() ids: ClientRef, @ValidBody(ClientPatch) patch: ClientPatch) {
    return this.runtime.update(scope, { level: 'client', ...ids, patch });
  }

  @Post(`${APPLICATION_PATH}/${CLIENT_SUBPATH}/message`)
  @HttpCode(204)
  @ApiDoc(doc.message('Send a server message to a client'))
  message(@Scope() scope: CallerScope, @Ids() ids: ClientRef, @ValidBody(MessageBody) message: MessageBody) {
    return this.runtime.message(scope, { level: 'client', ...ids }, message);
  }

  @GetJson(`${CHANNEL_PATH}/clients`)
  @ApiDoc(doc.read('List the clients in a channel', ClientInChannelSnapshotList))
  listInChannel(@Scope() scope: CallerScope, @Ids() ids: ChannelRef) {
    return this.runtime.query(scope, 'channel.clients', ids);
  }

  @GetJson(`${CHANNEL_PATH}/users/:userId/devices/:deviceId/clients`)
  @ApiDoc(doc.read('List the clients in a channel owned by a device', ClientInChannelSnapshotList))
  listInChannelOfDevice(@Scope() scope: CallerScope, @Ids() ids: ChannelDeviceRef) {
    return this.runtime.query(scope, 'channel.device.clients', ids);
  }

  @GetJson(`${CHANNEL_PATH}/${CLIENT_SUBPATH}`)
  @ApiDoc(doc.read('Snapshot of a client in a channel', ClientInChannelSnapshot))
  getInChannel(@Scope() scope: CallerScope, @Ids() ids: ChannelClientRef) {
    return this.runtime.query(scope, 'channel.client.get', ids);
  }

  @Patch(`${CHANNEL_PATH}/${CLIENT_SUBPATH}`)
  @HttpCode(204)
  @ApiDoc(
    doc.update(
      'Update a client in a channel: channel claim, recording, mute and unmute settings',
      ClientInChannelPatch,
    ),
  )
  updateInChannel(
    @Scope() scope: CallerScope,
    @Ids() ids: ChannelClientRef,
    @ValidBody(ClientInChannelPatch) patch: ClientInChannelPatch,
  ) {
    return this.runtime.update(scope, { level: 'channel.client', ...ids, patch });
  }

  @Delete(`${CHANNEL_PATH}/${CLIENT_SUBPATH}`)
  @HttpCode(204)
  @ApiDoc(doc.kick('Kick a client out of a channel'))
  kick(@Scope() scope: CallerScope, @Ids() ids: ChannelClientRef) {
    return this.runtime.kick(scope, { level: 'channel.client', ...ids });
  }

  @Post(`${CHANNEL_PATH}/${CLIENT_SUBPATH}/message`)
  @HttpCode(204)
  @ApiDoc(doc.message('Send a server message to a client in a channel'))
  messageInChannel(
    @Scope() scope: CallerScope,
    @Ids() ids: ChannelClientRef,
    @ValidBody(MessageBody) message: MessageBody,
  ) {
    return this.runtime.message(scope, { level: 'channel.client', ...ids }, message);
  }
}
