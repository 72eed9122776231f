import { Injectable } from '@nestjs/common';
import type { DomainEvent } from '@switchboard/contracts';
import { JsonLogger } from '@switchboard/service-kit';
import { EventPublisher, EventsParked } from '../events/event-publisher.js';
import { OperationJournal, stampEvents } from '../events/journal.js';
import { Pusher, type Delivery } from '../events/pusher.js';
import type { JournalEntry } from '../store/live-store.js';

/** What a change hands on once applied: its pushes to the gateways and its events to the stream. */
export interface ChangeEffects {
  deliver(deliveries: Delivery[], events: DomainEvent[]): Promise<void>;
  settle(entry: JournalEntry, deliveries: Delivery[], events: DomainEvent[]): Promise<void>;
}

/** Sends the pushes and publishes the events of applied changes. */
@Injectable()
export class ChangeDelivery implements ChangeEffects {
  constructor(
    private readonly pusher: Pusher,
    private readonly events: EventPublisher,
    private readonly journal: OperationJournal,
    private readonly logger: JsonLogger,
  ) {}

  /** Sends pushes and publishes events; the pushes go out even when the events must be parked. */
  async deliver(deliveries: Delivery[], events: DomainEvent[]): Promise<void> {
    const pushed = this.pusher.send(deliveries).catch((e: unknown) => {
      this.logger.event('error', 'pushes not sent', { error: (e as Error).message });
      return 0;
    });
    try {
      await this.events.publish(events);
    } finally {
      await pushed;
    }
  }

  /**
   * `deliver` for a change applied with a journal entry: its events get their ids from the entry, and
   * the entry goes once they are stored or parked (else it stays, for another replica to publish them).
   */
  async settle(entry: JournalEntry, deliveries: Delivery[], events: DomainEvent[]): Promise<void> {
    stampEvents(events, entry.id);
    try {
      await this.deliver(deliveries, events);
    } catch (e) {
      if (e instanceof EventsParked) this.journal.close(entry.id);
      throw e;
    }
    this.journal.close(entry.id);
  }
}
