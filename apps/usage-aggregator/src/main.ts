import { runService } from '@switchboard/service-kit';
import { buildUsageAggregator } from './app.js';
import { loadUsageAggregatorConfig, type UsageAggregatorConfig } from './config.js';

await runService('usage-aggregator', loadUsageAggregatorConfig, (c) =>
  buildUsageAggregator(c as UsageAggregatorConfig),
);
