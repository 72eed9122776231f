import { Module, type DynamicModule } from '@nestjs/common';
import {
  createRedis,
  createService,
  JsonLogger,
  ReadinessService,
  REDIS,
  RedisLifecycle,
  renderPlainError,
} from '@switchboard/service-kit';
import type { RegistryConfig } from './config.js';
import { EventPublisher } from './events/event-publisher.js';
import { OperationJournal } from './events/journal.js';
import { Pusher } from './events/pusher.js';
import { MediaEvents } from './media/media-events.js';
import { MediaEventsListener } from './media/media-events.listener.js';
import { NatsMediaAgents } from './media/media-control-agent.js';
import { LiveMediaControlReads } from './media/media-control-reads.js';
import { MediaControlConsumer } from './media/media-control.consumer.js';
import { MediaReconciler } from './media/media-reconcile.js';
import { PeerEnds } from './media/peer-ends.js';
import { Upstreams } from './media/upstreams.js';
import { PeerRelay } from './runtime/peer-relay.js';
import { RegistryConnectionsOnServers } from './media/media-reconcile-reads.js';
import { RuntimeRpc } from './rpc/runtime.rpc.js';
import { ChannelRecordingDefaults } from './runtime/channel-recording.js';
import { CommandService } from './runtime/command.service.js';
import { ChangeDelivery } from './runtime/change-delivery.js';
import { ClientReports } from './runtime/client-reports.js';
import { ConnectionLifecycle } from './runtime/connection-lifecycle.js';
import { GatewaySessions } from './runtime/gateway-sessions.js';
import { Diagnostics } from './runtime/diagnostics.js';
import { EdgeService } from './runtime/edge.service.js';
import { JournalRecovery } from './runtime/journal-recovery.js';
import { QueryService } from './runtime/query.service.js';
import { Recipients } from './runtime/recipients.js';
import { Heartbeats } from './servers/heartbeats.js';
import { Sweeper } from './servers/sweeper.js';
import { KEY_PREFIX } from './store/keys.js';
import { DatastoreDump } from './store/datastore-dump.js';
import { HousekeepingStore } from './store/housekeeping-store.js';
import { JournalStore } from './store/journal-store.js';
import { LiveReads } from './store/live-reads.js';
import { LiveStore } from './store/live-store.js';
import { OutboxStore } from './store/outbox-store.js';
import { RedisConnection } from './store/redis-connection.js';
import { ServersStore } from './store/servers-store.js';

@Module({})
class RegistryModule {
  static forConfig(config: RegistryConfig): DynamicModule {
    return {
      module: RegistryModule,
      controllers: [RuntimeRpc],
      providers: [
        {
          provide: REDIS,
          useFactory: (logger: JsonLogger) =>
            createRedis(config.redisUrl, 'runtime-registry', { autoPipelining: true, logger }),
          inject: [JsonLogger],
        },
        { provide: KEY_PREFIX, useValue: config.redisKeyPrefix },
        RedisLifecycle,
        LiveStore,
        ServersStore,
        LiveReads,
        JournalStore,
        OutboxStore,
        HousekeepingStore,
        DatastoreDump,
        RedisConnection,
        EventPublisher,
        OperationJournal,
        Pusher,
        ChangeDelivery,
        ConnectionLifecycle,
        ClientReports,
        GatewaySessions,
        ChannelRecordingDefaults,
        Recipients,
        EdgeService,
        CommandService,
        JournalRecovery,
        QueryService,
        Diagnostics,
        Heartbeats,
        Sweeper,
        MediaEvents,
        MediaEventsListener,
        // Media control (issue 22): commands to the media-agents, reconciliation with Janus.
        NatsMediaAgents,
        LiveMediaControlReads,
        MediaControlConsumer,
        RegistryConnectionsOnServers,
        MediaReconciler,
        Upstreams,
        PeerEnds,
        PeerRelay,
      ],
      exports: [REDIS],
    };
  }
}

export async function buildRuntimeRegistry(config: RegistryConfig) {
  const app = await createService({
    name: 'runtime-registry',
    config,
    imports: [RegistryModule.forConfig(config)],
    rpcServer: true,
    renderHttpError: renderPlainError,
  });
  const redis = app.get(RedisConnection);
  app.get(ReadinessService).register('redis', () => redis.ready());
  return app;
}
