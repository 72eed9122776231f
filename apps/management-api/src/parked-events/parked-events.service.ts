import { Inject, Injectable } from '@nestjs/common';
import type { JsMsg } from '@nats-io/jetstream';
import {
  DomainError,
  PARKED_EVENT_CONSUMER,
  parkedReplaySubject,
  parkedStreamName,
  parkedSubject,
  safeText,
  type ParkedEventMessage,
  type ParkedReplayReply,
  type ParkedReplayRequest,
} from '@switchboard/contracts';
import {
  ensureParkedStream,
  EventConsumerLoop,
  JsonLogger,
  Metrics,
  NatsClient,
  retryWhileDependencyDown,
  SERVICE_CONFIG,
  translateNatsError,
} from '@switchboard/service-kit';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import type { ManagementConfig } from '../config.js';
import { ConsumerLifecycle, managementConsumerLoop } from '../common/management-consumer.js';
import type { Caller } from '../auth/caller.js';
import { RecordReader, type EntityValues } from '../common/record-reader.js';
import { PARKED_EVENTS } from './parked-event.model.js';

/** Parked events are deployment-wide: only an operator credential sees them; others are told they may not. */
export function requireOperator(caller: Caller): void {
  if (!caller.operator)
    throw new DomainError('Forbidden', 'Parked events are readable by an operator credential only.');
}

/**
 * Copies the parked stream (`<ns>-parked`, contracts `parked.ts`) into `management.parked_event`
 * with the durable consumer `management-api-parked` (one row per stream, sequence and consumer:
 * an event parked twice is stored once), and replays a parked event on request: the owning
 * service runs it through its consumer's processing again and answers whether it went through.
 */
@Injectable()
export class ParkedEventsService extends ConsumerLifecycle {
  readonly reader = new RecordReader(PARKED_EVENTS);
  protected readonly consumer: EventConsumerLoop;

  constructor(
    private readonly ds: DataSource,
    private readonly nats: NatsClient,
    @Inject(SERVICE_CONFIG) private readonly config: ManagementConfig,
    private readonly logger: JsonLogger,
    metrics: Metrics,
  ) {
    super();
    const namespace = config.natsNamespace;
    this.consumer = managementConsumerLoop(
      { nats, config, logger, metrics },
      {
        name: PARKED_EVENT_CONSUMER,
        description: 'management-api: parked events of every consumer',
        stream: {
          name: parkedStreamName(namespace),
          filterSubject: parkedSubject(namespace, '*', '*'),
          ensure: (jsm) => ensureParkedStream(jsm, namespace),
        },
      },
      (msg) => this.store(msg),
    );
  }

  private async store(msg: JsMsg): Promise<void> {
    let parked: ParkedEventMessage;
    try {
      parked = msg.json<ParkedEventMessage>();
      if (
        typeof parked.payload !== 'string' ||
        typeof parked.consumer !== 'string' ||
        typeof parked.service !== 'string' ||
        !Number.isSafeInteger(parked.streamSequence)
      )
        throw new Error('fields missing');
    } catch (e) {
      await this.consumer.park(msg, `malformed parked event: ${(e as Error).message}`);
      return;
    }
    const preview = safeText(Buffer.from(parked.payload, 'base64').toString('utf8'));
    await retryWhileDependencyDown(
      () =>
        this.ds.query(
          `INSERT INTO management.parked_event (id, service, consumer, stream, stream_sequence, subject, payload, payload_preview, error, attempts, parked_on, modified_on)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)
           ON CONFLICT ON CONSTRAINT parked_event_once DO NOTHING`,
          [
            randomUUID(),
            parked.service,
            parked.consumer,
            parked.stream,
            parked.streamSequence,
            safeText(parked.subject, 500),
            parked.payload,
            preview,
            safeText(parked.error),
            parked.attempts,
            parked.parkedAt,
          ],
        ),
      { stopping: () => this.consumer.stopped, keepAlive: () => msg.working() },
    );
    msg.ack();
  }

  /**
   * Hands the parked event to its consumer's processing again (a request to the owning service):
   * gone through, it is marked `Replayed`; failed again, it stays parked with the new error.
   */
  async replay(caller: Caller, id: string): Promise<EntityValues> {
    requireOperator(caller);
    const row = await this.reader.find(this.ds, caller, id);
    if (!row) throw this.reader.notFound(id);
    if (row.status === 'Replayed') throw new DomainError('Conflict', `ParkedEvent '${id}' was replayed already.`);
    const request: ParkedReplayRequest = {
      consumer: row.consumer as string,
      stream: row.stream as string,
      streamSequence: row.streamSequence as number,
      subject: row.subject as string,
      payload: row.payload as string,
    };
    const subject = parkedReplaySubject(this.config.natsNamespace, row.service as string, request.consumer);
    let reply: ParkedReplayReply;
    try {
      const nc = await this.nats.connection$();
      reply = (
        await nc.request(subject, JSON.stringify(request), { timeout: this.config.natsRequestTimeoutMs })
      ).json<ParkedReplayReply>();
    } catch (e) {
      throw translateNatsError(e, subject, this.config.natsRequestTimeoutMs);
    }
    const now = Date.now();
    if (reply.ok) {
      await this.ds.query(
        `UPDATE management.parked_event SET status = 'Replayed', replays = replays + 1, replayed_on = $2, modified_on = $2 WHERE id = $1`,
        [id, now],
      );
      this.logger.event('info', 'parked event replayed', {
        id,
        consumer: request.consumer,
        seq: request.streamSequence,
      });
    } else {
      await this.ds.query(
        `UPDATE management.parked_event SET error = $2, replays = replays + 1, modified_on = $3 WHERE id = $1`,
        [id, safeText(reply.error), now],
      );
      this.logger.event('warn', 'a replayed parked event failed again; it stays parked', {
        id,
        consumer: request.consumer,
        seq: request.streamSequence,
        error: reply.error,
      });
    }
    return this.reader.one(this.ds, caller, id);
  }
}
