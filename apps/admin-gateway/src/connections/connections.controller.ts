import { Controller, Delete, HttpCode, Patch } from '@nestjs/common';
import {
  ConnectionInfo,
  ConnectionPatch,
  type CallerScope,
  type ChannelClientRef,
  type ChannelRef,
  type ConnectionRef,
} from '@switchboard/contracts';
import { ApiDoc } from '@switchboard/service-kit';
import { Scope } from '../auth/scope.decorator.js';
import { ConnectionInfoList } from '../http/doc-schemas.js';
import { Ids, ValidBody } from '../http/params.js';
import { ADMIN_PREFIXES } from '../http/prefixes.js';
import { CHANNEL_PATH, CLIENT_SUBPATH, CONNECTION_PATH, GetJson, routeDocs } from '../http/routes.js';
import { RuntimeClient } from '../runtime/runtime.client.js';

const doc = routeDocs('Connections');

@Controller([...ADMIN_PREFIXES])
export class ConnectionsController {
  constructor(private readonly runtime: RuntimeClient) {}

  @GetJson(`${CHANNEL_PATH}/connections`)
  @ApiDoc(doc.read('List the connections in a channel', ConnectionInfoList))
  listInChannel(@Scope() scope: CallerScope, @Ids() ids: ChannelRef) {
    return this.runtime.query(scope, 'channel.connections', ids);
  }

  @GetJson(`${CHANNEL_PATH}/${CLIENT_SUBPATH}/connections`)
  @ApiDoc(doc.read('List the connections of a client in a channel', ConnectionInfoList))
  listOfClient(@Scope() scope: CallerScope, @Ids() ids: ChannelClientRef) {
    return this.runtime.query(scope, 'channel.client.connections', ids);
  }

  @GetJson(CONNECTION_PATH)
  @ApiDoc(doc.read('Connection info, as last reported by the client', ConnectionInfo))
  get(@Scope() scope: CallerScope, @Ids() ids: ConnectionRef) {
    return this.runtime.query(scope, 'connection.get', ids);
  }

  @Patch(CONNECTION_PATH)
  @HttpCode(204)
  @ApiDoc(doc.update('Update a connection: recording, mute and unmute settings', ConnectionPatch))
  update(@Scope() scope: CallerScope, @Ids() ids: ConnectionRef, @ValidBody(ConnectionPatch) patch: ConnectionPatch) {
    return this.runtime.update(scope, { level: 'connection', ...ids, patch });
  }

  @Delete(CONNECTION_PATH)
  @HttpCode(204)
  @ApiDoc(doc.kick('Kick a connection out of a channel (closes it)'))
  kick(@Scope() scope: CallerScope, @Ids() ids: ConnectionRef) {
    return this.runtime.kick(scope, { level: 'connection', ...ids });
  }
}
