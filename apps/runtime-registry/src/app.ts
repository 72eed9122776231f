import { Module, type DynamicModule } from '@nestjs/common';
import { createRedis, createService, ReadinessService, REDIS, RedisLifecycle, redisReadiness, renderPlainError } from '@switchboard/service-kit';
import type { Redis } from 'ioredis';
import { ApplicationsRpc } from './applications/applications.rpc.js';
import { ApplicationsStore } from './applications/applications.store.js';
import type { RegistryConfig } from './config.js';
import { KEY_PREFIX } from './applications/runtime-keys.js';

@Module({})
class RegistryModule {
  static forConfig(config: RegistryConfig): DynamicModule {
    return {
      module: RegistryModule,
      controllers: [ApplicationsRpc],
      providers: [
        { provide: REDIS, useFactory: () => createRedis(config.redisUrl, 'runtime-registry') },
        { provide: KEY_PREFIX, useValue: config.redisKeyPrefix },
        ApplicationsStore,
        RedisLifecycle,
      ],
      exports: [REDIS],
    };
  }
}

export async function buildRuntimeRegistry(config: RegistryConfig) {
  const app = await createService({ name: 'runtime-registry', config, imports: [RegistryModule.forConfig(config)], rpcServer: true, renderHttpError: renderPlainError });
  const redis = app.get<Redis>(REDIS);
  app.get(ReadinessService).register('redis', () => redisReadiness(redis));
  return app;
}
