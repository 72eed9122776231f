import {
  Injectable,
  Module,
  type BeforeApplicationShutdown,
  type DynamicModule,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions, databaseReadiness } from '@switchboard/persistence';
import {
  createRedis,
  createService,
  JsonLogger,
  ReadinessService,
  REDIS,
  RedisLifecycle,
  redisReadiness,
  renderPlainError,
} from '@switchboard/service-kit';
import type { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import type { WebhookWorkerConfig } from './config.js';
import { DeliverWebhook } from './delivery/deliver-webhook.js';
import { DeliveryQueue } from './delivery/delivery-queue.js';
import { DeliveryWorker } from './delivery/delivery.worker.js';
import { EventConsumer } from './intake/event-consumer.js';
import { EventIntake } from './intake/event-intake.js';
import { DeliveriesRpc } from './log/deliveries.rpc.js';
import { DeliveriesService } from './log/deliveries.service.js';
import { DeliveryLogWriter } from './log/delivery-log.writer.js';
import { DeliveryRepository } from './log/delivery.repository.js';
import { MaintenanceService } from './log/maintenance.service.js';
import { WebhookResolver } from './matching/webhook-resolver.js';
import { WebhookMetrics } from './metrics/webhook-metrics.js';
import { persistenceOptions } from './persistence.js';
import { WEBHOOK_CONFIG } from './tokens.js';

/**
 * Start and stop order. Start: deliveries (BullMQ worker), then maintenance, then the event
 * consumer. Stop (before NATS, PostgreSQL and Redis close): at once, stop reading events and
 * finish the group in progress, and stop the worker (the attempts in flight finish, the rest of
 * its jobs goes back to the queue); then write the last attempts, stop maintenance, close the queue.
 */
@Injectable()
class WebhookLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    private readonly consumer: EventConsumer,
    private readonly worker: DeliveryWorker,
    private readonly maintenance: MaintenanceService,
    private readonly log: DeliveryLogWriter,
    private readonly queue: DeliveryQueue,
  ) {}

  onApplicationBootstrap(): void {
    this.worker.start();
    this.maintenance.start();
    this.consumer.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    // Both at once: deliveries stop starting while the group of events in progress is queued.
    await Promise.all([this.consumer.stop(), this.worker.stop()]);
    await this.log.drain();
    await this.maintenance.stop();
    await this.queue.close();
  }
}

@Module({})
class WebhookWorkerModule {
  static forConfig(config: WebhookWorkerConfig): DynamicModule {
    return {
      module: WebhookWorkerModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => dataSourceOptions(persistenceOptions(config.databaseUrl, config.databasePoolSize)),
        }),
      ],
      controllers: [DeliveriesRpc],
      providers: [
        { provide: WEBHOOK_CONFIG, useValue: config },
        {
          provide: REDIS,
          useFactory: (logger: JsonLogger) => createRedis(config.redisUrl, 'webhook-worker', { logger }),
          inject: [JsonLogger],
        },
        RedisLifecycle,
        WebhookMetrics,
        WebhookResolver,
        DeliveryRepository,
        DeliveryLogWriter,
        DeliveryQueue,
        DeliverWebhook,
        DeliveryWorker,
        EventIntake,
        EventConsumer,
        MaintenanceService,
        DeliveriesService,
        WebhookLifecycle,
      ],
    };
  }
}

export async function buildWebhookWorker(config: WebhookWorkerConfig) {
  const app = await createService({
    name: 'webhook-worker',
    config,
    imports: [WebhookWorkerModule.forConfig(config)],
    rpcServer: true,
    renderHttpError: renderPlainError,
  });
  const ds = app.get(DataSource);
  const redis = app.get<Redis>(REDIS);
  const consumer = app.get(EventConsumer);
  const readiness = app.get(ReadinessService);
  readiness.register('postgres', () => databaseReadiness(ds));
  readiness.register('redis', () => redisReadiness(redis));
  readiness.register('jetstream', async () => {
    if (!consumer.isAttached()) throw new Error('not consuming the event stream');
  });
  return app;
}
