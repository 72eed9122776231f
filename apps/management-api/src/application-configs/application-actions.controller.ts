import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import {
  ClaimsPayload,
  StringValueResponse,
  SendMessagePayload,
  SendUserMessagePayload,
  SendDeviceMessagePayload,
  SendClientMessagePayload,
  SendChannelMessagePayload,
  SendChannelUserMessagePayload,
  SendChannelDeviceMessagePayload,
  SendChannelClientMessagePayload,
  KickChannelPayload,
  KickUserPayload,
  KickDevicePayload,
  KickClientPayload,
  KickConnectionPayload,
  UpdateChannelPayload,
  UpdateUserPayload,
  UpdateDevicePayload,
  UpdateClientPayload,
  UpdateConnectionPayload,
} from '@switchboard/contracts';
import { ApiDoc, type ApiDocOptions } from '@switchboard/service-kit';
import { CurrentCaller, type Caller } from '../auth/caller.js';
import { API_VERSION_DOC } from '../common/odata-query.js';
import { ApplicationActionsService } from './application-actions.service.js';

const tags = ['Application actions'];
const FORWARDED =
  "Validated, then forwarded to the runtime registry (`runtime-registry.v1.command`) with the caller's scope. " +
  '204 when the runtime accepted it; its error otherwise: 404 for an unknown application, channel, user, device, client or connection, ' +
  '503 when the runtime is down, 504 when it does not answer in time.';

function action(summary: string, body: ApiDocOptions['body']): ApiDocOptions {
  return { summary, description: FORWARDED, tags, body, status: 204, errors: [404, 503, 504], query: API_VERSION_DOC };
}

/** `POST /ApplicationConfigs/{id}/<Action>` (http-contract.md, interface B actions). */
@Controller('ApplicationConfigs')
export class ApplicationActionsController {
  constructor(private readonly actions: ApplicationActionsService) {}

  @Post(':id/Token')
  @HttpCode(200)
  @ApiDoc({
    summary: 'Issue a client token from claims',
    description:
      'Answers `{ "value": "<client token>" }`: `base64(header).base64(payload).base64(signature)` (standard Base64), byte for byte as LiveSwitch\'s client SDK writes it for the same claims: header `{"alg":"HS256","typ":"JWT"}`, ' +
      'payload `iat`, `exp` (Unix seconds; lifetime CLIENT_TOKEN_TTL_SECONDS, default 120), `type: "register"`, `applicationId`, `userId`, `deviceId`, `clientId`, `clientRoles`, `channels` (the channel claims, in the SDK\'s key order, `true` flags only, `action` defaulting to `join`), absent claims left out; ' +
      'signature HMAC-SHA256 of `header.payload` keyed with the UTF-8 bytes of the shared secret, without `=` padding (and, as the SDK does, without a final `A`). 409 when the application config is disabled.',
    tags,
    body: ClaimsPayload,
    response: StringValueResponse,
    status: 200,
    errors: [404, 409],
    query: API_VERSION_DOC,
  })
  token(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.actions.token(caller, id, body);
  }

  @Post(':id/SendMessage')
  @HttpCode(204)
  @ApiDoc(action('Send a server message to the application', SendMessagePayload))
  async sendMessage(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    await this.actions.run(caller, id, 'SendMessage', body);
  }

  @Post(':id/SendUserMessage')
  @HttpCode(204)
  @ApiDoc(action('Send a server message to a user', SendUserMessagePayload))
  async sendUserMessage(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<void> {
    await this.actions.run(caller, id, 'SendUserMessage', body);
  }

  @Post(':id/SendDeviceMessage')
  @HttpCode(204)
  @ApiDoc(action('Send a server message to a device', SendDeviceMessagePayload))
  async sendDeviceMessage(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<void> {
    await this.actions.run(caller, id, 'SendDeviceMessage', body);
  }

  @Post(':id/SendClientMessage')
  @HttpCode(204)
  @ApiDoc(action('Send a server message to a client', SendClientMessagePayload))
  async sendClientMessage(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<void> {
    await this.actions.run(caller, id, 'SendClientMessage', body);
  }

  @Post(':id/SendChannelMessage')
  @HttpCode(204)
  @ApiDoc(action('Send a server message to a channel', SendChannelMessagePayload))
  async sendChannelMessage(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<void> {
    await this.actions.run(caller, id, 'SendChannelMessage', body);
  }

  @Post(':id/SendChannelUserMessage')
  @HttpCode(204)
  @ApiDoc(action('Send a server message to a user in a channel', SendChannelUserMessagePayload))
  async sendChannelUserMessage(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<void> {
    await this.actions.run(caller, id, 'SendChannelUserMessage', body);
  }

  @Post(':id/SendChannelDeviceMessage')
  @HttpCode(204)
  @ApiDoc(action('Send a server message to a device in a channel', SendChannelDeviceMessagePayload))
  async sendChannelDeviceMessage(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<void> {
    await this.actions.run(caller, id, 'SendChannelDeviceMessage', body);
  }

  @Post(':id/SendChannelClientMessage')
  @HttpCode(204)
  @ApiDoc(action('Send a server message to a client in a channel', SendChannelClientMessagePayload))
  async sendChannelClientMessage(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<void> {
    await this.actions.run(caller, id, 'SendChannelClientMessage', body);
  }

  @Post(':id/KickChannel')
  @HttpCode(204)
  @ApiDoc(action('Kick everyone out of a channel', KickChannelPayload))
  async kickChannel(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    await this.actions.run(caller, id, 'KickChannel', body);
  }

  @Post(':id/KickUser')
  @HttpCode(204)
  @ApiDoc(action('Kick a user out of a channel', KickUserPayload))
  async kickUser(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    await this.actions.run(caller, id, 'KickUser', body);
  }

  @Post(':id/KickDevice')
  @HttpCode(204)
  @ApiDoc(action('Kick a device out of a channel', KickDevicePayload))
  async kickDevice(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    await this.actions.run(caller, id, 'KickDevice', body);
  }

  @Post(':id/KickClient')
  @HttpCode(204)
  @ApiDoc(action('Kick a client out of a channel', KickClientPayload))
  async kickClient(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    await this.actions.run(caller, id, 'KickClient', body);
  }

  @Post(':id/KickConnection')
  @HttpCode(204)
  @ApiDoc(action('Kick a connection out of a channel', KickConnectionPayload))
  async kickConnection(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    await this.actions.run(caller, id, 'KickConnection', body);
  }

  @Post(':id/UpdateChannel')
  @HttpCode(204)
  @ApiDoc(action('Update the settings of a channel', UpdateChannelPayload))
  async updateChannel(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    await this.actions.run(caller, id, 'UpdateChannel', body);
  }

  @Post(':id/UpdateUser')
  @HttpCode(204)
  @ApiDoc(action('Update the settings of a user in a channel', UpdateUserPayload))
  async updateUser(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    await this.actions.run(caller, id, 'UpdateUser', body);
  }

  @Post(':id/UpdateDevice')
  @HttpCode(204)
  @ApiDoc(action('Update the settings of a device in a channel', UpdateDevicePayload))
  async updateDevice(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    await this.actions.run(caller, id, 'UpdateDevice', body);
  }

  @Post(':id/UpdateClient')
  @HttpCode(204)
  @ApiDoc(action('Update the settings of a client in a channel', UpdateClientPayload))
  async updateClient(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    await this.actions.run(caller, id, 'UpdateClient', body);
  }

  @Post(':id/UpdateConnection')
  @HttpCode(204)
  @ApiDoc(action('Update the settings of a connection', UpdateConnectionPayload))
  async updateConnection(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<void> {
    await this.actions.run(caller, id, 'UpdateConnection', body);
  }
}
