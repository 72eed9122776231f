import { Module, type DynamicModule } from '@nestjs/common';
import { Gauge } from 'prom-client';
import {
  createService,
  JsonLogger,
  Metrics,
  NatsClient,
  ReadinessService,
  renderPlainError,
} from '@switchboard/service-kit';
import type { MediaAgentConfig } from './config.js';
import { checkJanusAdmin } from './janus/janus-admin.js';
import { JanusClient } from './janus/janus-client.js';
import { resolveMediaServerId } from './media-server-id.js';
import { JANUS, MEDIA_SERVER_ID, Registration } from './registration.js';
import { bindMediaCommands, MEDIA_ROOMS, MediaCommandsRpc } from './rooms/media-commands.rpc.js';
import { MediaEvents } from './rooms/media-events.js';
import { MediaRooms } from './rooms/media-rooms.js';

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
    const mediaServerId = resolveMediaServerId(config.mediaServerId, config.mediaAgentDataDir);
    bindMediaCommands(mediaServerId);
    return {
      module: MediaAgentModule,
      controllers: [MediaCommandsRpc],
      providers: [
        { provide: JANUS, useValue: janus },
        { provide: MEDIA_SERVER_ID, useValue: mediaServerId },
        {
          provide: MEDIA_ROOMS,
          inject: [NatsClient, JsonLogger, Metrics],
          useFactory: (nats: NatsClient, logger: JsonLogger, metrics: Metrics) => {
            const rooms = new MediaRooms(janus, new MediaEvents(nats, logger, mediaServerId), logger, {
              roomAdminKey: config.janusRoomAdminKey,
              requestTimeoutMs: config.janusRequestTimeoutMs,
            });
            countRooms(rooms, metrics);
            return rooms;
          },
        },
        Registration,
      ],
      exports: [JANUS, MEDIA_SERVER_ID],
    };
  }
}

/** `media_agent_rooms` and `media_agent_connections`, read at each scrape. */
function countRooms(rooms: MediaRooms, metrics: Metrics): void {
  const roomsGauge: Gauge = new Gauge({
    name: 'media_agent_rooms',
    help: 'VideoRoom rooms the agent runs on its Janus',
    registers: [metrics.registry],
    collect: () => roomsGauge.set(rooms.counts().rooms),
  });
  const connectionsGauge: Gauge = new Gauge({
    name: 'media_agent_connections',
    help: 'Publisher and subscriber connections in those rooms',
    registers: [metrics.registry],
    collect: () => connectionsGauge.set(rooms.counts().connections),
  });
}

export async function buildMediaAgent(config: MediaAgentConfig) {
  const app = await createService({
    name: 'media-agent',
    config,
    imports: [MediaAgentModule.forConfig(config)],
    rpcServer: true,
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
