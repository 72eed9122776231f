import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { JsonLogger, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { UsageAggregatorConfig } from '../config.js';
import { UsageEventConsumer } from './usage-event.consumer.js';
import { UsageLedger, type PruneOutcome } from './usage-ledger.js';

/**
 * Keeps the idempotency and connection tables from growing forever: every
 * `USAGE_PRUNE_INTERVAL_MS` it deletes processed event ids and settled connection rows older than
 * the retention horizon. The horizon is never shorter than the time JetStream may still deliver an
 * event (the contract's stream max age, or the live stream's when longer), so a redelivered event
 * always finds its id; with an unlimited or unreadable stream nothing is pruned. Replicas may
 * prune at the same time: the deletes are idempotent and skip rows another one holds.
 */
@Injectable()
export class UsagePruner implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: UsageAggregatorConfig,
    private readonly ledger: UsageLedger,
    private readonly consumer: UsageEventConsumer,
    private readonly logger: JsonLogger,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.tick(), this.config.usagePruneIntervalMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  private tick(): void {
    if (this.running) return;
    this.running = this.prune()
      .then((outcome) => {
        if (outcome && outcome.processedEvents + outcome.connections > 0)
          this.logger.event('info', 'usage ledger pruned', { ...outcome });
      })
      .catch((e) =>
        this.logger.event('warn', 'pruning the usage ledger failed; next interval retries', {
          error: (e as Error).message,
        }),
      )
      .finally(() => {
        this.running = undefined;
      });
  }

  /** Rows older than this many ms may go; null: nothing may (stream unlimited or unknown). */
  horizonMs(): Promise<number | null> {
    return this.consumer.redeliveryHorizonMs(this.config.usageLedgerRetentionSeconds * 1000);
  }

  async prune(now = Date.now()): Promise<PruneOutcome | null> {
    const horizon = await this.horizonMs();
    return horizon === null ? null : this.ledger.prune(now - horizon);
  }
}
