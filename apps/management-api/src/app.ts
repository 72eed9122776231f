import { PUBLISHED_CONTROLLERS } from './http/openapi.controller.js';
import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD, APP_PIPE } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions, databaseReadiness } from '@switchboard/persistence';
import { createService, ReadinessService } from '@switchboard/service-kit';
import { DataSource } from 'typeorm';
import { ApiKeysRpc } from './api-keys/api-keys.rpc.js';
import { OrganizationsRpc } from './organizations/organizations.rpc.js';
import { ApiKeysService } from './api-keys/api-keys.service.js';
import { ApplicationActionsService } from './application-configs/application-actions.service.js';
import { ApplicationConfigsService } from './application-configs/application-configs.service.js';
import { ApplicationEvents } from './application-configs/application-events.js';
import { ApplicationsRpc } from './application-configs/applications.rpc.js';
import { ApplicationWebhooksService } from './application-webhooks/application-webhooks.service.js';
import { WebhooksResolverService } from './application-webhooks/webhooks-resolver.service.js';
import { WebhooksRpc } from './application-webhooks/webhooks.rpc.js';
import { ChangeNoticeConsumer } from './change-records/change-notice.consumer.js';
import { ChannelRecordingSettingsRpc } from './channel-configs/channel-recording-settings.rpc.js';
import { AuthGuard } from './auth/auth.guard.js';
import { KnownOrganizations } from './auth/known-organizations.js';
import { ChannelConfigsService } from './channel-configs/channel-configs.service.js';
import { ChannelWebhooksService } from './channel-webhooks/channel-webhooks.service.js';
import { WebhookTargets } from './common/webhook-records.js';
import { WebhookTests } from './common/webhook-tests.js';
import type { ManagementConfig } from './config.js';
import { ForwardedReadsService } from './forwarded/forwarded-reads.service.js';
import { ApiVersionGuard } from './http/api-version.guard.js';
import { renderODataError } from './http/odata-errors.js';
import { OpenApiController } from './http/openapi.controller.js';
import { RequestTextPipe } from './http/request-text.pipe.js';
import { OrganizationsService } from './organizations/organizations.service.js';
import { PaymentMethodsService } from './payment-methods/payment-methods.service.js';
import { persistenceOptions } from './persistence.js';
import { SubscriptionsService } from './subscriptions/subscriptions.service.js';
import { UserAccountsService } from './user-accounts/user-accounts.service.js';
import { ParkedEventsService } from './parked-events/parked-events.service.js';

/** Every interface B controller (each route documented with `@ApiDoc`, see http/openapi.spec.ts). */
export const HTTP_CONTROLLERS = PUBLISHED_CONTROLLERS;

/**
 * NATS responders: `management-api.v1.api-keys.verify`, `...applications.resolve`, `...webhooks.resolve`,
 * `...channel-configs.recording`.
 */
export const RPC_CONTROLLERS = [
  ApiKeysRpc,
  OrganizationsRpc,
  ApplicationsRpc,
  WebhooksRpc,
  ChannelRecordingSettingsRpc,
];

@Module({})
class ManagementModule {
  static forConfig(config: ManagementConfig): DynamicModule {
    return {
      module: ManagementModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => dataSourceOptions(persistenceOptions(config.databaseUrl, config.databasePoolSize)),
        }),
      ],
      controllers: [...HTTP_CONTROLLERS, OpenApiController, ...RPC_CONTROLLERS],
      providers: [
        ApiKeysService,
        ApplicationConfigsService,
        ApplicationActionsService,
        ApplicationEvents,
        ApplicationWebhooksService,
        ChangeNoticeConsumer,
        ParkedEventsService,
        ChannelConfigsService,
        ChannelWebhooksService,
        WebhookTargets,
        WebhookTests,
        ForwardedReadsService,
        KnownOrganizations,
        OrganizationsService,
        PaymentMethodsService,
        SubscriptionsService,
        UserAccountsService,
        WebhooksResolverService,
        { provide: APP_GUARD, useClass: ApiVersionGuard },
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_PIPE, useClass: RequestTextPipe },
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
