import { Module, type DynamicModule } from '@nestjs/common';
import { createService, ReadinessService, renderPlainError } from '@switchboard/service-kit';
import type { MediaAgentConfig } from './config.js';
import { checkJanusAdmin } from './janus/janus-admin.js';
import { JanusClient } from './janus/janus-client.js';
import { resolveMediaServerId } from './media-server-id.js';
import { JANUS, MEDIA_SERVER_ID, Registration } from './registration.js';

@Module({})
class MediaAgentModule {
  static forConfig(config: MediaAgentConfig): DynamicModule {
    const janus = new JanusClient({
      url: config.janusUrl,
      requestTimeoutMs: config.janusRequestTimeoutMs,
      reconnectMinMs: config.janusReconnectMinMs,
      reconnectMaxMs: Math.max(config.janusReconnectMinMs, config.janusReconnectMaxMs),
      keepAliveSeconds: config.janusKeepAliveSeconds,
    });
    return {
      module: MediaAgentModule,
      providers: [
        { provide: JANUS, useValue: janus },
        { provide: MEDIA_SERVER_ID, useValue: resolveMediaServerId(config.mediaServerId, config.mediaAgentDataDir) },
        Registration,
      ],
      exports: [JANUS, MEDIA_SERVER_ID],
    };
  }
}

export async function buildMediaAgent(config: MediaAgentConfig) {
  // No NATS request handlers yet: the registry's commands to the agent come with room placement.
  const app = await createService({
    name: 'media-agent',
    config,
    imports: [MediaAgentModule.forConfig(config)],
    rpcServer: false,
    renderHttpError: renderPlainError,
  });
  const janus = app.get<JanusClient>(JANUS);
  const readiness = app.get(ReadinessService);
  readiness.register('janus', async () => void (await janus.info()));
  readiness.register('janus-admin', async () => {
    try {
      await checkJanusAdmin({
        url: config.janusAdminUrl,
        secret: config.janusAdminSecret,
        requestTimeoutMs: config.janusRequestTimeoutMs,
      });
    } catch (e) {
      // Janus answers 403 to a wrong secret: say which setting to fix.
      throw new Error(
        `Janus Admin API at ${config.janusAdminUrl}: ${(e as Error).message} (check JANUS_ADMIN_URL and JANUS_ADMIN_SECRET)`,
      );
    }
  });
  return app;
}
