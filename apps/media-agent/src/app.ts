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
import { recordingProviders } from './recording/recording.providers.js';
import { JANUS, MEDIA_SERVER_ID, Registration } from './registration.js';
import {
  bindMediaCommands,
  MEDIA_EVENTS,
  MEDIA_MIXERS,
  MEDIA_ROOMS,
  MediaCommandsRpc,
} from './rooms/media-commands.rpc.js';
import { MediaEvents } from './rooms/media-events.js';
import { MediaMixers } from './rooms/media-mixers.js';
import { MediaRooms } from './rooms/media-rooms.js';
import { MediaStats } from './rooms/media-stats.js';

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
    const roomOptions = { roomAdminKey: config.janusRoomAdminKey, requestTimeoutMs: config.janusRequestTimeoutMs };
    return {
      module: MediaAgentModule,
      controllers: [MediaCommandsRpc],
      providers: [
        { provide: JANUS, useValue: janus },
        { provide: MEDIA_SERVER_ID, useValue: mediaServerId },
        {
          provide: MEDIA_EVENTS,
          inject: [NatsClient, JsonLogger],
          useFactory: (nats: NatsClient, logger: JsonLogger) => new MediaEvents(nats, logger, mediaServerId),
        },
        {
          provide: MEDIA_ROOMS,
          inject: [MEDIA_EVENTS, JsonLogger],
          useFactory: (events: MediaEvents, logger: JsonLogger) => new MediaRooms(janus, events, logger, roomOptions),
        },
        {
          provide: MEDIA_MIXERS,
          inject: [MEDIA_EVENTS, JsonLogger],
          useFactory: (events: MediaEvents, logger: JsonLogger) => new MediaMixers(janus, events, logger, roomOptions),
        },
        {
          provide: MediaStats,
          inject: [MEDIA_ROOMS, MEDIA_MIXERS, MEDIA_EVENTS, JsonLogger, Metrics],
          useFactory: (
            rooms: MediaRooms,
            mixers: MediaMixers,
            events: MediaEvents,
            logger: JsonLogger,
            metrics: Metrics,
          ) => {
            countRooms(rooms, mixers, metrics);
            const sources = {
              targets: () => [...rooms.statsTargets(), ...mixers.statsTargets()],
              counts: () => ({ rooms: rooms.counts().rooms, mixers: mixers.counts().mixers }),
            };
            return new MediaStats(janus, sources, events, logger, {
              adminUrl: config.janusAdminUrl,
              adminSecret: config.janusAdminSecret,
              intervalMs: config.mediaStatsIntervalMs,
              requestTimeoutMs: config.janusRequestTimeoutMs,
            });
          },
        },
        ...recordingProviders(config, janus),
        Registration,
      ],
      exports: [JANUS, MEDIA_SERVER_ID],
    };
  }
}

/** `media_agent_rooms` and `media_agent_connections`, read at each scrape. */
function countRooms(rooms: MediaRooms, mixers: MediaMixers, metrics: Metrics): void {
  const roomsGauge: Gauge = new Gauge({
    name: 'media_agent_rooms',
    help: 'VideoRoom rooms the agent runs on its Janus',
    registers: [metrics.registry],
    collect: () => roomsGauge.set(rooms.counts().rooms),
  });
  const connectionsGauge: Gauge = new Gauge({
    name: 'media_agent_connections',
    help: 'Publisher, subscriber and mixer connections in those rooms and mixers',
    registers: [metrics.registry],
    collect: () => connectionsGauge.set(rooms.counts().connections + mixers.counts().connections),
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
