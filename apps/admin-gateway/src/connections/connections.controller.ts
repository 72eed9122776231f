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
import { CHANNEL_PATH, CONNECTION_PATH, READ_ERRORS, CLIENT_SUBPATH, WRITE_ERRORS, GetJson } from '../http/routes.js';
import { RuntimeClient } from '../runtime/runtime.client.js';

const tags = ['Connections'];

@Controller([...ADMIN_PREFIXES])
export class ConnectionsController {
  constructor(private readonly runtime: RuntimeClient) {}

  @GetJson(`${CHANNEL_PATH}/connections`)
  @ApiDoc({ summary: 'List the connections in a channel', tags, response: ConnectionInfoList, errors: READ_ERRORS })
  listInChannel(@Scope() scope: CallerScope, @Ids() ids: ChannelRef) {
    return this.runtime.query(scope, 'channel.connections', ids);
  }

  @GetJson(`${CHANNEL_PATH}/${CLIENT_SUBPATH}/connections`)
  @ApiDoc({
    summary: 'List the connections of a client in a channel',
    tags,
    response: ConnectionInfoList,
    errors: READ_ERRORS,
  })
  listOfClient(@Scope() scope: CallerScope, @Ids() ids: ChannelClientRef) {
    return this.runtime.query(scope, 'channel.client.connections', ids);
  }

  @GetJson(CONNECTION_PATH)
  @ApiDoc({
    summary: 'Connection info, as last reported by the client',
    tags,
    response: ConnectionInfo,
    errors: READ_ERRORS,
  })
  get(@Scope() scope: CallerScope, @Ids() ids: ConnectionRef) {
    return this.runtime.query(scope, 'connection.get', ids);
  }

  @Patch(CONNECTION_PATH)
  @HttpCode(204)
  @ApiDoc({
    summary: 'Update a connection: recording, mute and unmute settings',
    tags,
    body: ConnectionPatch,
    status: 204,
    errors: WRITE_ERRORS,
  })
  async update(
    @Scope() scope: CallerScope,
    @Ids() ids: ConnectionRef,
    @ValidBody(ConnectionPatch) patch: ConnectionPatch,
  ) {
    await this.runtime.command(scope, {
      kind: 'update',
      origin: 'api',
      target: { level: 'connection', ...ids, patch },
    });
  }

  @Delete(CONNECTION_PATH)
  @HttpCode(204)
  @ApiDoc({ summary: 'Kick a connection out of a channel (closes it)', tags, status: 204, errors: READ_ERRORS })
  async kick(@Scope() scope: CallerScope, @Ids() ids: ConnectionRef) {
    await this.runtime.command(scope, { kind: 'kick', origin: 'api', target: { level: 'connection', ...ids } });
  }
}
