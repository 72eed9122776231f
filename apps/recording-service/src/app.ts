import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions, databaseReadiness } from '@switchboard/persistence';
import { createRedis, createService, ReadinessService, redisReadiness, RedisLifecycle, REDIS, renderPlainError } from '@switchboard/service-kit';
import type { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import type { RecordingServiceConfig } from './config.js';
import { persistenceOptions } from './persistence.js';

@Module({})
class RecordingServiceModule {
  static forConfig(config: RecordingServiceConfig): DynamicModule {
    return {
      module: RecordingServiceModule,
      imports: [TypeOrmModule.forRootAsync({ useFactory: () => dataSourceOptions(persistenceOptions(config.databaseUrl, config.databasePoolSize)) })],
      providers: [{ provide: REDIS, useFactory: () => createRedis(config.redisUrl, 'recording-service') }, RedisLifecycle],
    };
  }
}

export async function buildRecordingService(config: RecordingServiceConfig) {
  const app = await createService({ name: 'recording-service', config, imports: [RecordingServiceModule.forConfig(config)], rpcServer: true, renderHttpError: renderPlainError });
  const ds = app.get(DataSource);
  const redis = app.get<Redis>(REDIS);
  app.get(ReadinessService).register('postgres', () => databaseReadiness(ds));
  app.get(ReadinessService).register('redis', () => redisReadiness(redis));
  return app;
}
