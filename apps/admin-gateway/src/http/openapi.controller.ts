import { Controller, Get, Inject } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { buildSyncAsyncApi, ProblemDetails, SYNC_PATH } from '@switchboard/contracts';
import { buildOpenApi, HTTP_EDGE_RULES, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { AddressInfo } from 'node:net';
import type { GatewayConfig } from '../config.js';
import { WithoutCredential } from '../auth/admin-auth.guard.js';
import { ApplicationsController } from '../applications/applications.controller.js';
import { ChannelsController } from '../channels/channels.controller.js';
import { ClientsController } from '../clients/clients.controller.js';
import { ConnectionsController } from '../connections/connections.controller.js';
import { ConnectorsController } from '../connectors/connectors.controller.js';
import { DevicesController } from '../devices/devices.controller.js';
import { DiagnosticsController } from '../diagnostics/diagnostics.controller.js';
import { MediaServersController } from '../media-servers/media-servers.controller.js';
import { RecordingsController } from '../recordings/recordings.controller.js';
import { UsersController } from '../users/users.controller.js';

/** Every interface A controller, in document order. */
export const PUBLISHED_CONTROLLERS: Array<new (...args: never[]) => unknown> = [
  ApplicationsController,
  ChannelsController,
  UsersController,
  DevicesController,
  ClientsController,
  ConnectionsController,
  RecordingsController,
  MediaServersController,
  ConnectorsController,
  DiagnosticsController,
];

let document: Record<string, unknown> | undefined;

/**
 * The API documents: OpenAPI of interface A, AsyncAPI of the `/sync` client edge. Readable without a
 * credential, but only from the admin CIDR allowlist, like the rest of interface A.
 */
@Controller(['admin/api/v1.0', 'admin/api/v1'])
@WithoutCredential()
export class OpenApiController {
  private syncDocument: Record<string, unknown> | undefined;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: GatewayConfig,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  /** Built on first read, once the server listens: its server is where clients reach `/sync`. */
  @Get('asyncapi.json')
  asyncapi() {
    this.syncDocument ??= buildSyncAsyncApi({ url: this.syncUrl() });
    return this.syncDocument;
  }

  /** SYNC_PUBLIC_URL, or the address the HTTP server listens on (as the gateway's heartbeats announce it). */
  private syncUrl(): string {
    if (this.config.syncPublicUrl) return this.config.syncPublicUrl;
    const address = this.adapterHost.httpAdapter?.getHttpServer()?.address() as AddressInfo | string | null | undefined;
    const port = address && typeof address === 'object' ? address.port : this.config.httpPort;
    return `ws://${this.config.httpHost}:${port}${SYNC_PATH}`;
  }

  @Get('openapi.json')
  openapi() {
    document ??= buildOpenApi(
      {
        title: 'Switchboard runtime admin API (interface A)',
        version: '1.0',
        description:
          'Inspect and steer live applications. Every failure answers application/problem+json. Authenticate with `X-API-Key` ' +
          '(a key issued through the management API) or an OAuth2 Bearer token; the caller address must be inside the admin CIDR allowlist. ' +
          'Updates, kicks and sends answer 204 No Content. Media servers, connectors, diagnostics and the application list need an operator credential. ' +
          'Live clients connect to the WebSocket `/sync` of the same host (frame protocol: the AsyncAPI document ' +
          '`asyncapi.json` next to this one, and docs/sync-protocol.md). ' +
          HTTP_EDGE_RULES,
        security: {
          ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          oauth2: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        },
        errorSchema: ProblemDetails,
        errorMediaType: 'application/problem+json',
        commonErrors: [400, 401],
      },
      PUBLISHED_CONTROLLERS,
    );
    return document;
  }
}
