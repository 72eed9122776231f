import { Controller, Get } from '@nestjs/common';
import { ODataErrorBody } from '@switchboard/contracts';
import { buildOpenApi } from '@switchboard/service-kit';
import { ApiKeysController } from '../api-keys/api-keys.controller.js';
import { Public } from '../auth/caller.js';

/** Every interface B controller, in document order. */
export const PUBLISHED_CONTROLLERS = [ApiKeysController];

let document: Record<string, unknown> | undefined;

@Controller()
export class OpenApiController {
  @Get('openapi.json')
  @Public()
  openapi() {
    document ??= buildOpenApi(
      {
        title: 'Switchboard management API (interface B)',
        version: '1.0',
        description:
          'OData-style management API. Lists answer `{ "value": [...] }`; errors answer `{ "error": { code, message, target, details } }`. ' +
          'Authenticate with `X-API-Key`. Every operation accepts the optional query parameter `api-version` (only `1.0`).',
        security: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
        errorSchema: ODataErrorBody,
        errorMediaType: 'application/json',
        commonErrors: [400, 401],
      },
      PUBLISHED_CONTROLLERS,
    );
    return document;
  }
}
