import { Inject, Injectable } from '@nestjs/common';
import type { DomainEvent } from '@switchboard/contracts';
import { JsonLogger, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { RegistryConfig } from '../config.js';
import { EventsParked } from '../events/event-publisher.js';
import { OperationJournal, type StoredEntry } from '../events/journal.js';
import { ServersStore } from '../store/servers-store.js';
import { CommandService } from './command.service.js';
import { ChangeDelivery } from './change-delivery.js';
import { SERVER_CAUSE } from './connection-events.js';
import { ConnectionLifecycle } from './connection-lifecycle.js';
import { EdgeService } from './edge.service.js';
import { readJournalContext, type JournalContext } from './journaled.js';

/**
 * A journal entry is left to its own replica for EVENT_PUBLISH_TIMEOUT_MS (its publish) and this
 * much more (the steps around it, and the outbox becoming visible to every replica); after that it
 * is taken for the entry of a replica that died.
 */
const GRACE_MS = 5000;
/** Entries finished per pass, oldest first. */
const PER_PASS = 500;
/** An entry whose events cannot be built is given up (logged with its context) after this long. */
const GIVE_UP_MS = 3_600_000;

/**
 * Finishes the changes of the operation journal whose replica did not (see OperationJournal): from
 * each entry left over, builds the change's events again (with the ids its replica gave them) and
 * publishes them. Run by the housekeeping pass, one replica at a time.
 */
@Injectable()
export class JournalRecovery {
  /** Entries whose events could not be built, and whether that was logged. */
  private readonly failing = new Set<string>();

  constructor(
    private readonly journal: OperationJournal,
    private readonly delivery: ChangeDelivery,
    private readonly edge: EdgeService,
    private readonly commands: CommandService,
    private readonly connections: ConnectionLifecycle,
    private readonly servers: ServersStore,
    private readonly logger: JsonLogger,
    @Inject(SERVICE_CONFIG) private readonly config: RegistryConfig,
  ) {}

  /** One pass: answers how many entries were finished. */
  async recover(): Promise<number> {
    const now = await this.servers.now();
    const due = await this.journal.recordedBefore(now - this.config.eventPublishTimeoutMs - GRACE_MS, PER_PASS);
    let finished = 0;
    for (const entry of due) {
      const context = readJournalContext(entry.context);
      if (!context) {
        this.logger.event('error', 'unreadable journal entry dropped', { id: entry.id });
        await this.journal.drop(entry.id);
        continue;
      }
      let events: DomainEvent[];
      try {
        events = await this.eventsOf(context, entry.answer);
      } catch (e) {
        await this.failed(entry, now, e);
        continue;
      }
      this.failing.delete(entry.id);
      try {
        // Events only: a push this late could undo what happened since (a kick after the client
        // joined again, an older claim); the gateways' reconcile of their sessions
        // (gateway.sessions) brings the edge up to date instead.
        await this.delivery.settle({ id: entry.id, context: '' }, [], events);
      } catch (e) {
        // Otherwise the stream and the outbox are out of reach: the next pass tries again.
        if (!(e instanceof EventsParked)) throw e;
        // Parked (settled): the stream is unavailable, and each further entry would wait out its
        // publish timeout too; the rest wait for the next pass.
        finished++;
        break;
      }
      finished++;
    }
    // Gone before another replica's pass reads the journal.
    await this.journal.flush();
    if (finished)
      this.logger.event('warn', 'events of changes whose replica stopped before publishing them were published', {
        entries: finished,
      });
    return finished;
  }

  private eventsOf(context: JournalContext, answer: string): Promise<DomainEvent[]> | DomainEvent[] {
    switch (context.kind) {
      case 'kick':
      case 'update':
        return this.commands.recover(context, answer);
      case 'edge':
      case 'leave':
      case 'close':
      case 'unregister':
        return this.edge.recover(context, answer);
      case 'media':
        return this.connections.stateEvents(
          context.applicationId,
          context.connection,
          context.state,
          SERVER_CAUSE,
          answer,
        );
    }
  }

  private async failed(entry: StoredEntry, now: number, e: unknown) {
    const error = (e as Error).message;
    if (now - entry.atUs / 1000 > GIVE_UP_MS) {
      this.failing.delete(entry.id);
      this.logger.event('error', 'journal entry given up: its events could not be built', {
        id: entry.id,
        context: entry.context,
        error,
      });
      await this.journal.drop(entry.id);
    } else if (!this.failing.has(entry.id)) {
      this.failing.add(entry.id);
      this.logger.event('warn', 'the events of a journal entry could not be built yet', { id: entry.id, error });
    }
  }
}
