import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { createService } from '@switchboard/service-kit';
import { AdminAuthGuard } from './auth/admin-auth.guard.js';
import { CredentialsService } from './auth/credentials.service.js';
import { OperatorGuard } from './auth/operator.guard.js';
import type { GatewayConfig } from './config.js';
import { OpenApiController, PUBLISHED_CONTROLLERS } from './http/openapi.controller.js';
import { renderProblem } from './http/problem.js';
import { RuntimeClient } from './runtime/runtime.client.js';
import { ApplicationSecrets } from './sync/application-secrets.service.js';
import { ClientTokenVerifier } from './sync/client-token.verifier.js';
import { EdgeClient } from './sync/edge.client.js';
import { gatewayIdProvider } from './sync/gateway-identity.js';
import { HeartbeatService } from './sync/heartbeat.service.js';
import { PushListener } from './sync/push.listener.js';
import { SessionReconciler } from './sync/session-reconciler.js';
import { SessionStore } from './sync/session.store.js';
import { SyncHandlers } from './sync/sync.handlers.js';
import { IceServers } from './media/ice-servers.js';
import { MediaSignalling } from './media/media-signalling.js';
import { PeerRelayClient } from './media/peer-relay.js';
import { SyncMetrics } from './sync/sync.metrics.js';
import { SyncServer } from './sync/sync.server.js';

/** Interface A over HTTP: thin controllers forwarding to runtime-registry over NATS. */
@Module({
  controllers: [...PUBLISHED_CONTROLLERS, OpenApiController],
  providers: [CredentialsService, OperatorGuard, RuntimeClient, { provide: APP_GUARD, useClass: AdminAuthGuard }],
})
class AdminApiModule {}

/** The client edge: the /sync WebSocket on the same HTTP server, pushes (and their reconciliation), heartbeats. */
@Module({
  providers: [
    gatewayIdProvider,
    SyncMetrics,
    EdgeClient,
    ApplicationSecrets,
    ClientTokenVerifier,
    SessionStore,
    SyncHandlers,
    MediaSignalling,
    PeerRelayClient,
    IceServers,
    SyncServer,
    PushListener,
    SessionReconciler,
    HeartbeatService,
  ],
  exports: [SyncServer, SessionStore],
})
class ClientEdgeModule {}

@Module({})
class GatewayModule {
  static forConfig(_config: GatewayConfig): DynamicModule {
    return { module: GatewayModule, imports: [AdminApiModule, ClientEdgeModule] };
  }
}

/**
 * admin-gateway: interface A and the client edge. The HTTP side is stateless (every replica can
 * answer any request); the client edge holds the sockets of its own clients.
 */
export async function buildAdminGateway(config: GatewayConfig) {
  return createService({
    name: 'admin-gateway',
    config,
    imports: [GatewayModule.forConfig(config)],
    rpcServer: false,
    renderHttpError: renderProblem,
    trustedProxies: config.trustedProxyCidrs,
  });
}
