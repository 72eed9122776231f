import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions, databaseReadiness } from '@switchboard/persistence';
import { createService, ReadinessService, renderPlainError } from '@switchboard/service-kit';
import { DataSource } from 'typeorm';
import type { UsageAggregatorConfig } from './config.js';
import { persistenceOptions } from './persistence.js';
import { UsageEventConsumer } from './usage/usage-event.consumer.js';
import { UsageLedger } from './usage/usage-ledger.js';
import { UsagePruner } from './usage/usage-pruner.js';
import { UsageQueryService } from './usage/usage-query.service.js';
import { UsageRpc } from './usage/usage.rpc.js';

@Module({})
class UsageAggregatorModule {
  static forConfig(config: UsageAggregatorConfig): DynamicModule {
    return {
      module: UsageAggregatorModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => dataSourceOptions(persistenceOptions(config.databaseUrl, config.databasePoolSize)),
        }),
      ],
      controllers: [UsageRpc],
      providers: [UsageLedger, UsageQueryService, UsageEventConsumer, UsagePruner],
    };
  }
}

export async function buildUsageAggregator(config: UsageAggregatorConfig) {
  const app = await createService({
    name: 'usage-aggregator',
    config,
    imports: [UsageAggregatorModule.forConfig(config)],
    rpcServer: true,
    renderHttpError: renderPlainError,
  });
  const ds = app.get(DataSource);
  const readiness = app.get(ReadinessService);
  readiness.register('postgres', () => databaseReadiness(ds));
  const consumer = app.get(UsageEventConsumer);
  readiness.register('event-stream', () => consumer.ready());
  return app;
}
