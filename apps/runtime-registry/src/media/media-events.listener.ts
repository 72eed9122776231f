import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Msg, Subscription } from '@nats-io/transport-node';
import {
  MediaAgentSubjects,
  mediaAgentEventEnvelope,
  namespaced,
  type MediaAgentEventEnvelope,
} from '@switchboard/contracts';
import { JsonLogger, Metrics, NatsClient, SERVICE_CONFIG, type BaseConfig } from '@switchboard/service-kit';
import { Counter } from 'prom-client';
import { MediaEvents } from './media-events.js';
import { MediaReconciler } from './media-reconcile.js';

const decoder = new TextDecoder();
/** One registry replica handles each media event. */
export const MEDIA_EVENTS_QUEUE = 'runtime-registry-media-events';

/**
 * Media-agent events (`<ns>.media-agent.v1.*.events`, core NATS, queue group): each one checked
 * against `MediaAgentEventEnvelope` (a bad one is logged and counted, never thrown) and handed to
 * `MediaEvents`. The events of one connection are handled one after the other, in arrival order.
 */
@Injectable()
export class MediaEventsListener implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private sub?: Subscription;
  private stopped = false;
  private rejected = 0;
  /** The last handling in flight per connection (`a/ch/cn`): the next event of it waits for it. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly handled: Counter<'kind' | 'outcome'>;

  constructor(
    private readonly nats: NatsClient,
    private readonly events: MediaEvents,
    @Inject(MediaReconciler) private readonly reconciler: Pick<MediaReconciler, 'soon'>,
    private readonly logger: JsonLogger,
    metrics: Metrics,
    @Inject(SERVICE_CONFIG) private readonly config: BaseConfig,
  ) {
    this.handled = new Counter({
      name: 'registry_media_events_total',
      help: 'Media-agent events by kind and outcome: applied, ignored (no connection of the registry there, or no change), rejected (not a valid envelope), failed',
      labelNames: ['kind', 'outcome'],
      registers: [metrics.registry],
    });
  }

  onApplicationBootstrap() {
    void this.nats
      .connection$()
      .then((nc) => {
        if (this.stopped) return;
        this.sub = nc.subscribe(namespaced(this.config.natsNamespace, MediaAgentSubjects.allEvents), {
          queue: MEDIA_EVENTS_QUEUE,
          callback: (err, msg) => {
            if (!err) this.receive(msg);
          },
        });
      })
      .catch(() => undefined);
  }

  async beforeApplicationShutdown() {
    this.stopped = true;
    this.sub?.unsubscribe();
    await Promise.allSettled(this.inFlight.values());
  }

  private receive(msg: Msg): void {
    let envelope: MediaAgentEventEnvelope;
    try {
      const body = JSON.parse(decoder.decode(msg.data)) as Record<string, unknown>;
      const payload = body && typeof body === 'object' && 'pattern' in body && 'data' in body ? body.data : body;
      envelope = mediaAgentEventEnvelope.parse(payload) as MediaAgentEventEnvelope;
    } catch (e) {
      this.handled.inc({ kind: 'unknown', outcome: 'rejected' });
      // Logged once in a while: a misbehaving agent publishes statistics every few seconds.
      if (this.rejected++ % 100 === 0)
        this.logger.event('warn', 'media event rejected', { error: (e as Error).message, rejected: this.rejected });
      return;
    }
    const event = envelope.event;
    const key = 'connectionId' in event ? `${event.applicationId}/${event.channelId}/${event.connectionId}` : null;
    const previous = (key && this.inFlight.get(key)) || Promise.resolve();
    const done = previous.then(() => this.handle(envelope));
    if (!key) return;
    this.inFlight.set(key, done);
    void done.finally(() => {
      if (this.inFlight.get(key) === done) this.inFlight.delete(key);
    });
  }

  private async handle(envelope: MediaAgentEventEnvelope): Promise<void> {
    const kind = envelope.event.kind;
    // A room its agent could not adopt is gone with its connections: the reconciliation fails them now.
    if (envelope.event.kind === 'room.ended' && envelope.event.reason === 'cleaned-up') {
      this.reconciler.soon();
      this.handled.inc({ kind, outcome: 'applied' });
      return;
    }
    try {
      this.handled.inc({ kind, outcome: await this.events.handle(envelope) });
    } catch (e) {
      this.handled.inc({ kind, outcome: 'failed' });
      this.logger.event('error', 'media event not handled', {
        kind,
        mediaServerId: envelope.mediaServerId,
        error: (e as Error).message,
      });
    }
  }
}
