import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { createService } from '@switchboard/service-kit';
import { ApplicationsController } from './applications/applications.controller.js';
import { AdminAuthGuard } from './auth/admin-auth.guard.js';
import { CredentialsService } from './auth/credentials.service.js';
import type { GatewayConfig } from './config.js';
import { OpenApiController } from './http/openapi.controller.js';
import { renderProblem } from './http/problem.js';

@Module({})
class GatewayModule {
  static forConfig(_config: GatewayConfig): DynamicModule {
    return {
      module: GatewayModule,
      controllers: [ApplicationsController, OpenApiController],
      providers: [CredentialsService, { provide: APP_GUARD, useClass: AdminAuthGuard }],
    };
  }
}

/** admin-gateway is stateless: every replica answers any request by asking the owning service over NATS. */
export async function buildAdminGateway(config: GatewayConfig) {
  return createService({ name: 'admin-gateway', config, imports: [GatewayModule.forConfig(config)], rpcServer: false, renderHttpError: renderProblem });
}
