import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions, databaseReadiness } from '@switchboard/persistence';
import { createRedis, createService, ReadinessService, redisReadiness, RedisLifecycle, REDIS, renderPlainError } from '@switchboard/service-kit';
import type { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import type { WebhookWorkerConfig } from './config.js';
import { persistenceOptions } from './persistence.js';

@Module({})
class WebhookWorkerModule {
  static forConfig(config: WebhookWorkerConfig): DynamicModule {
    return {
      module: WebhookWorkerModule,
      imports: [TypeOrmModule.forRootAsync({ useFactory: () => dataSourceOptions(persistenceOptions(config.databaseUrl, config.databasePoolSize)) })],
      providers: [{ provide: REDIS, useFactory: () => createRedis(config.redisUrl, 'webhook-worker') }, RedisLifecycle],
    };
  }
}

export async function buildWebhookWorker(config: WebhookWorkerConfig) {
  const app = await createService({ name: 'webhook-worker', config, imports: [WebhookWorkerModule.forConfig(config)], rpcServer: true, renderHttpError: renderPlainError });
  const ds = app.get(DataSource);
  const redis = app.get<Redis>(REDIS);
  app.get(ReadinessService).register('postgres', () => databaseReadiness(ds));
  app.get(ReadinessService).register('redis', () => redisReadiness(redis));
  return app;
}
