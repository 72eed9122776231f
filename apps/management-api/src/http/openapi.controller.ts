import { Controller, Get } from '@nestjs/common';
import { ODATA_ERROR_CODES, ODataErrorBody } from '@switchboard/contracts';
import { buildOpenApi, HTTP_EDGE_RULES } from '@switchboard/service-kit';
import { ApiKeysController } from '../api-keys/api-keys.controller.js';
import { ApplicationActionsController } from '../application-configs/application-actions.controller.js';
import { ApplicationConfigsController } from '../application-configs/application-configs.controller.js';
import { ApplicationWebhooksController } from '../application-webhooks/application-webhooks.controller.js';
import { Public } from '../auth/caller.js';
import { ChangeRecordsController } from '../change-records/change-records.controller.js';
import { ChannelConfigsController } from '../channel-configs/channel-configs.controller.js';
import { ChannelWebhooksController } from '../channel-webhooks/channel-webhooks.controller.js';
import {
  ChannelRecordingsController,
  ConnectionRecordingsController,
  RecordingStorageController,
} from '../forwarded/recordings.controller.js';
import { UsageController } from '../forwarded/usage.controller.js';
import { WebhookDeliveriesController } from '../forwarded/webhook-deliveries.controller.js';
import { OrganizationsController } from '../organizations/organizations.controller.js';
import { PaymentMethodsController } from '../payment-methods/payment-methods.controller.js';
import { SubscriptionsController } from '../subscriptions/subscriptions.controller.js';
import { UserAccountsController } from '../user-accounts/user-accounts.controller.js';
import { ParkedEventsController } from '../parked-events/parked-events.controller.js';

/** Every interface B controller, in document order. */
export const PUBLISHED_CONTROLLERS = [
  ApiKeysController,
  ApplicationConfigsController,
  ApplicationActionsController,
  ApplicationWebhooksController,
  ChannelConfigsController,
  ChannelWebhooksController,
  ChangeRecordsController,
  UsageController,
  ChannelRecordingsController,
  ConnectionRecordingsController,
  RecordingStorageController,
  OrganizationsController,
  PaymentMethodsController,
  SubscriptionsController,
  UserAccountsController,
  WebhookDeliveriesController,
  ParkedEventsController,
];

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
          'OData-style management API. Lists answer `{ "value": [...] }` (plus `@odata.count` with `$count=true`) and take `$filter`, `$orderby`, `$top` (at most 1000, default 100), `$skip`, `$count`, `$select` and `$expand` (depth at most 2); ' +
          'single reads take `$select` and `$expand`. Creates answer 201, updates 200 (PUT replaces the writable fields, PATCH changes the given ones); server-managed fields in bodies are ignored. ' +
          `Errors answer \`{ "error": { code, message, target, details } }\` with code ${ODATA_ERROR_CODES.map((c) => `\`${c}\``).join(', ')} (schema \`ODataError\`), and \`target\` naming the offending option or field. ` +
          "Every record belongs to the caller's organization; another organization's record answers 404 like a missing one. Every change writes change records (secrets `<redacted>`). " +
          'Authenticate with `X-API-Key`. Every operation accepts the optional query parameter `api-version` (only `1.0`). ' +
          HTTP_EDGE_RULES,
        security: {
          ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          oauth2: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description:
              'User account access token (when OAUTH_* is configured). Its organization claim must name an organization of this deployment: a token naming none, or one that is not an organization id or does not exist, answers 403 Forbidden.',
          },
        },
        errorSchema: ODataErrorBody,
        errorMediaType: 'application/json',
        commonErrors: [400, 401],
      },
      PUBLISHED_CONTROLLERS,
    );
    return document;
  }
}
