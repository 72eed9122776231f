import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  ReplayPolicy,
  type ConsumerMessages,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import {
  deliveryLimitOf,
  EventConsumerLoop,
  eventStreamOf,
  JsonLogger,
  Metrics,
  NatsClient,
  SERVICE_CONFIG,
  type EventConsumerSpec,
} from '@switchboard/service-kit';
import { Histogram } from 'prom-client';
import type { RegistryConfig } from '../config.js';
import { NatsMediaAgents } from './media-control-agent.js';
import type { MediaDomainEvent } from './media-control-context.js';
import { LiveMediaControlReads } from './media-control-reads.js';
import { MediaControlRun } from './media-control-run.js';
import { PeerEnds } from './peer-ends.js';
import { Upstreams } from './upstreams.js';

/** The durable consumer of the registry's own events that commands the media-agents. */
export const MEDIA_CONTROL_CONSUMER = 'media-control';
/** Events of one moment go together (a channel mute's events are published in one batch). */
const GROUP_WINDOW_MS = 10;
const GROUP_MAX = 200;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Reads the domain event stream (durable consumer `media-control`, shared by the replicas) and has
 * the media-agents carry out what the events decided: mutes, leaves, kicks, room destroys. An event
 * is acknowledged once its commands are answered; a failing one comes again, then is parked.
 */
@Injectable()
export class MediaControlConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly consumer: EventConsumerLoop;
  private readonly runner: MediaControlRun;
  private readonly delay: Histogram<'kind'>;
  private buffer: JsMsg[] = [];
  private wake?: () => void;
  private readerDone = false;

  constructor(
    @Inject(SERVICE_CONFIG) config: RegistryConfig,
    agents: NatsMediaAgents,
    reads: LiveMediaControlReads,
    nats: NatsClient,
    private readonly logger: JsonLogger,
    metrics: Metrics,
    private readonly upstreams: Upstreams,
    private readonly peerEnds: PeerEnds,
  ) {
    this.runner = new MediaControlRun(agents, reads);
    this.delay = new Histogram({
      name: 'media_control_delay_seconds',
      help: 'From the change (event timestamp) to the media-agent answering its command, by command kind',
      labelNames: ['kind'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [metrics.registry],
    });
    this.consumer = new EventConsumerLoop(
      {
        namespace: config.natsNamespace,
        spec: this.spec(config),
        maxMessages: GROUP_MAX * 2,
        connection: () => nats.connection$(),
        logger,
        stream: {
          ...eventStreamOf(config.natsNamespace),
          ensure: (jsm) => ensureFromNow(jsm, config.natsNamespace, this.spec(config)),
        },
        parking: { service: 'runtime-registry', maxAttempts: config.eventMaxAttempts, registry: metrics.registry },
        process: (messages) => this.process(messages),
      },
      (messages) => {
        this.readerDone = false;
        return Promise.all([this.read(messages), this.loop()]).then(() => undefined);
      },
    );
  }

  private spec(config: RegistryConfig): EventConsumerSpec {
    return {
      name: MEDIA_CONTROL_CONSUMER,
      description: 'runtime-registry: mutes, ends and room destroys on the media-agents',
      ackWaitMs: 15_000,
      maxAckPending: 1000,
      maxDeliver: deliveryLimitOf(config.eventMaxAttempts),
    };
  }

  onApplicationBootstrap() {
    this.consumer.start();
  }

  async onApplicationShutdown() {
    const stopped = this.consumer.stop(2000);
    this.wake?.();
    await stopped;
    for (const msg of this.buffer.splice(0)) msg.nak();
  }

  private async read(messages: ConsumerMessages): Promise<void> {
    try {
      for await (const msg of messages) {
        this.buffer.push(msg);
        this.wake?.();
      }
    } finally {
      this.readerDone = true;
      this.wake?.();
    }
  }

  private async loop(): Promise<void> {
    for (;;) {
      if (this.consumer.stopped) return;
      if (this.buffer.length === 0) {
        if (this.readerDone) return;
        await new Promise<void>((r) => (this.wake = r));
        this.wake = undefined;
        continue;
      }
      await sleep(GROUP_WINDOW_MS);
      await this.consumer.handle(this.buffer.splice(0, GROUP_MAX));
    }
  }

  /** One group: acknowledges what was carried out; throws when something failed (retried, then parked). */
  private async process(messages: readonly JsMsg[]): Promise<void> {
    const events: MediaDomainEvent[] = [];
    const readable: JsMsg[] = [];
    for (const msg of messages) {
      try {
        events.push(msg.json<MediaDomainEvent>());
        readable.push(msg);
      } catch {
        await this.consumer.park(msg, 'not a JSON domain event');
      }
    }
    // Retries may outlast the ack wait: the events stay in hand meanwhile.
    const outcome = await this.runner.run(events, () => readable.forEach((msg) => msg.working()));
    // At most once, like every push: a client that missed one sees the upstreams at its next join.
    await this.upstreams.announce(events).catch((e: unknown) => {
      this.logger.event('warn', 'upstream pushes not sent', { error: (e as Error).message });
    });
    // Before any acknowledgement: if it fails, the group comes again (the commands are idempotent).
    await this.peerEnds.settle(events);
    for (const { kind, delayMs } of outcome.sent) this.delay.observe({ kind }, delayMs / 1000);
    for (const i of outcome.done) readable[i]!.ack();
    if (outcome.failed.length > 0) {
      this.logger.event('warn', 'media control: commands failed; their events come again', {
        count: outcome.failed.length,
        error: (outcome.error as Error | undefined)?.message,
      });
      throw outcome.error instanceof Error ? outcome.error : new Error('a media-agent command failed');
    }
  }
}

/**
 * Waits for the stream (the EventPublisher creates and shapes it) and creates the consumer, the
 * first time, from new events on: what happened before it existed is the reconciliation's.
 */
async function ensureFromNow(jsm: JetStreamManager, namespace: string, spec: EventConsumerSpec): Promise<void> {
  const { name: stream, filterSubject } = eventStreamOf(namespace);
  await jsm.streams.info(stream);
  try {
    await jsm.consumers.info(stream, spec.name);
    return;
  } catch (e) {
    if (!(e instanceof JetStreamApiError && e.code === JetStreamApiCodes.ConsumerNotFound)) throw e;
  }
  await jsm.consumers
    .add(stream, {
      durable_name: spec.name,
      description: spec.description,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.New,
      replay_policy: ReplayPolicy.Instant,
      filter_subject: filterSubject,
      ack_wait: nanos(spec.ackWaitMs),
      max_deliver: spec.maxDeliver ?? -1,
      max_ack_pending: spec.maxAckPending,
    })
    // Another replica created it in between: service-kit's ensure finds it.
    .catch(() => undefined);
}
