import { Controller, Get } from '@nestjs/common';
import { ProblemDetails } from '@switchboard/contracts';
import { buildOpenApi } from '@switchboard/service-kit';
import { ApplicationsController } from '../applications/applications.controller.js';

/** Every interface A controller, in document order. */
export const PUBLISHED_CONTROLLERS = [ApplicationsController];

let document: Record<string, unknown> | undefined;

@Controller(['admin/api/v1.0', 'admin/api/v1'])
export class OpenApiController {
  @Get('openapi.json')
  openapi() {
    document ??= buildOpenApi(
      {
        title: 'Switchboard runtime admin API (interface A)',
        version: '1.0',
        description:
          'Inspect and steer live applications. Every failure answers application/problem+json. Authenticate with `X-API-Key` ' +
          '(a key issued through the management API) or an OAuth2 Bearer token; the caller address must be inside the admin CIDR allowlist.',
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
