import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions, databaseReadiness } from '@switchboard/persistence';
import { createService, ReadinessService } from '@switchboard/service-kit';
import { DataSource } from 'typeorm';
import { ApiKeysController } from './api-keys/api-keys.controller.js';
import { ApiKeysRpc } from './api-keys/api-keys.rpc.js';
import { ApiKeysService } from './api-keys/api-keys.service.js';
import { AuthGuard } from './auth/auth.guard.js';
import type { ManagementConfig } from './config.js';
import { ApiVersionGuard } from './http/api-version.guard.js';
import { renderODataError } from './http/odata-errors.js';
import { OpenApiController } from './http/openapi.controller.js';
import { persistenceOptions } from './persistence.js';

@Module({})
class ManagementModule {
  static forConfig(config: ManagementConfig): DynamicModule {
    return {
      module: ManagementModule,
      imports: [TypeOrmModule.forRootAsync({ useFactory: () => dataSourceOptions(persistenceOptions(config.databaseUrl, config.databasePoolSize)) })],
      controllers: [ApiKeysController, ApiKeysRpc, OpenApiController],
      providers: [ApiKeysService, { provide: APP_GUARD, useClass: ApiVersionGuard }, { provide: APP_GUARD, useClass: AuthGuard }],
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
