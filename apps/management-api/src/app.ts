import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions, databaseReadiness } from '@switchboard/persistence';
import { createService, ReadinessService } from '@switchboard/service-kit';
import { DataSource } from 'typeorm';
import { ApiKeysController } from './api-keys/api-keys.controller.js';
import { ApiKeysRpc } from './api-keys/api-keys.rpc.js';
import { ApiKeysService } from './api-keys/api-keys.service.js';
import { ApplicationActionsController } from './application-configs/application-actions.controller.js';
import { ApplicationActionsService } from './application-configs/application-actions.service.js';
import { ApplicationConfigsController } from './application-configs/application-configs.controller.js';
import { ApplicationConfigsService } from './application-configs/application-configs.service.js';
import { ApplicationEvents } from './application-configs/application-events.js';
import { ApplicationsRpc } from './application-configs/applications.rpc.js';
import { ApplicationWebhooksController } from './application-webhooks/application-webhooks.controller.js';
import { ApplicationWebhooksService } from './application-webhooks/application-webhooks.service.js';
import { WebhooksResolverService } from './application-webhooks/webhooks-resolver.service.js';
import { WebhooksRpc } from './application-webhooks/webhooks.rpc.js';
import { AuthGuard } from './auth/auth.guard.js';
import { ChangeRecordsController } from './change-records/change-records.controller.js';
import { ChannelConfigsController } from './channel-configs/channel-configs.controller.js';
import { ChannelConfigsService } from './channel-configs/channel-configs.service.js';
import { ChannelWebhooksController } from './channel-webhooks/channel-webhooks.controller.js';
import { ChannelWebhooksService } from './channel-webhooks/channel-webhooks.service.js';
import type { ManagementConfig } from './config.js';
import { ForwardedReadsService } from './forwarded/forwarded-reads.service.js';
import { ChannelRecordingsController, ConnectionRecordingsController, RecordingStorageController } from './forwarded/recordings.controller.js';
import { UsageController } from './forwarded/usage.controller.js';
import { WebhookDeliveriesController } from './forwarded/webhook-deliveries.controller.js';
import { ApiVersionGuard } from './http/api-version.guard.js';
import { renderODataError } from './http/odata-errors.js';
import { OpenApiController } from './http/openapi.controller.js';
import { OrganizationsController } from './organizations/organizations.controller.js';
import { OrganizationsService } from './organizations/organizations.service.js';
import { PaymentMethodsController } from './payment-methods/payment-methods.controller.js';
import { PaymentMethodsService } from './payment-methods/payment-methods.service.js';
import { persistenceOptions } from './persistence.js';
import { SubscriptionsController } from './subscriptions/subscriptions.controller.js';
import { SubscriptionsService } from './subscriptions/subscriptions.service.js';
import { UserAccountsController } from './user-accounts/user-accounts.controller.js';
import { UserAccountsService } from './user-accounts/user-accounts.service.js';

/** Every interface B controller (each route documented with `@ApiDoc`, see http/openapi.spec.ts). */
export const HTTP_CONTROLLERS = [
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
];

/** NATS responders: `management-api.v1.api-keys.verify`, `...applications.resolve`, `...webhooks.resolve`. */
export const RPC_CONTROLLERS = [ApiKeysRpc, ApplicationsRpc, WebhooksRpc];

@Module({})
class ManagementModule {
  static forConfig(config: ManagementConfig): DynamicModule {
    return {
      module: ManagementModule,
      imports: [TypeOrmModule.forRootAsync({ useFactory: () => dataSourceOptions(persistenceOptions(config.databaseUrl, config.databasePoolSize)) })],
      controllers: [...HTTP_CONTROLLERS, OpenApiController, ...RPC_CONTROLLERS],
      providers: [
        ApiKeysService,
        ApplicationConfigsService,
        ApplicationActionsService,
        ApplicationEvents,
        ApplicationWebhooksService,
        ChannelConfigsService,
        ChannelWebhooksService,
        ForwardedReadsService,
        OrganizationsService,
        PaymentMethodsService,
        SubscriptionsService,
        UserAccountsService,
        WebhooksResolverService,
        { provide: APP_GUARD, useClass: ApiVersionGuard },
        { provide: APP_GUARD, useClass: AuthGuard },
      ],
    };
  }
}

export async function buildManagementApi(config: ManagementConfig) {
  const app = await createService({
    name: 'management-api',
    config,
    imports: [ManagementModule.forConfig(config)],
    rpcServer: true,
    renderHttpError: renderODataError,
  });
  const ds = app.get(DataSource);
  app.get(ReadinessService).register('postgres', () => databaseReadiness(ds));
  return app;
}
