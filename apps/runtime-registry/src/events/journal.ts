import { randomUUID } from 'node:crypto';
import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import type { DomainEvent } from '@switchboard/contracts';
import { JsonLogger } from '@switchboard/service-kit';
import { JournalStore } from '../store/journal-store.js';
import type { JournalEntry } from '../store/live-store.js';

/** Closed entries are removed together, this long after the first of them closed. */
const CLOSE_BATCH_MS = 5;

/** An entry read back from the journal. */
export interface StoredEntry {
  id: string;
  /** When its change was applied (Redis clock, Unix µs: the order in which changes were applied). */
  atUs: number;
  context: unknown;
  /** The change's script answer (JSON text). */
  answer: string;
}

/**
 * The operation journal (`P rt:journal`): a change that causes events is applied together with an
 * entry recording its context and answer, removed once its events are stored or parked; an entry
 * left over is finished by another replica (JournalRecovery). See the README, "A replica that stops".
 */
@Injectable()
export class OperationJournal implements BeforeApplicationShutdown {
  private readonly closed = new Set<string>();
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;

  constructor(
    private readonly store: JournalStore,
    private readonly logger: JsonLogger,
  ) {}

  /** A new entry for an operation (recorded only by the script run it is given to). */
  open(context: unknown): JournalEntry {
    return { id: randomUUID(), context: JSON.stringify(context) };
  }

  /** The events of the entry's change are stored or parked: the entry goes (batched with others). */
  close(id: string): void {
    this.closed.add(id);
    this.schedule();
  }

  private schedule() {
    if (this.timer || this.flushing || this.closed.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, CLOSE_BATCH_MS);
  }

  /**
   * Removes the entries closed so far (after a removal in flight). When Redis does not take it, they
   * are kept for the next try.
   */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const ids = [...this.closed];
    this.closed.clear();
    if (ids.length === 0) return;
    this.flushing = this.store
      .removeEntries(ids)
      .catch((e: unknown) => {
        for (const id of ids) this.closed.add(id);
        this.logger.event('warn', 'closed journal entries not removed yet, retrying', {
          count: ids.length,
          error: (e as Error).message,
        });
        return new Promise<void>((resolve) => setTimeout(resolve, 200).unref());
      })
      .finally(() => {
        this.flushing = undefined;
        this.schedule();
      });
    await this.flushing;
  }

  async beforeApplicationShutdown() {
    await this.flush().catch(() => undefined);
  }

  /**
   * Entries recorded before `beforeMs` (Redis clock, Unix ms), oldest first, at most `limit`. An
   * unreadable entry comes back with `context` null.
   */
  async recordedBefore(beforeMs: number, limit: number): Promise<StoredEntry[]> {
    const out: StoredEntry[] = [];
    for (const { id, text } of await this.store.entries()) {
      if (this.closed.has(id)) continue;
      const entry = parseEntry(id, text);
      if (entry.atUs < beforeMs * 1000) out.push(entry);
    }
    return out.sort((x, y) => x.atUs - y.atUs).slice(0, limit);
  }

  /** Removes an entry at once (one that can never be finished). */
  async drop(id: string): Promise<void> {
    await this.store.removeEntries([id]);
  }
}

function parseEntry(id: string, text: string): StoredEntry {
  const first = text.indexOf('\n');
  const second = first < 0 ? -1 : text.indexOf('\n', first + 1);
  const atUs = Number(text.slice(0, Math.max(0, first))) || 0;
  if (second < 0) return { id, atUs, context: null, answer: '' };
  try {
    return { id, atUs, context: JSON.parse(text.slice(first + 1, second)) as unknown, answer: text.slice(second + 1) };
  } catch {
    return { id, atUs, context: null, answer: '' };
  }
}

/**
 * The id of the `index`-th event of a journaled change: the entry id (a random UUID) with `index`
 * added to its last 32 bits, so a replica rebuilding the events gives each the id it had. (Two
 * entries' ids share their first 96 bits by chance alone: with 90 random bits in them, never.)
 */
export function journalEventId(entryId: string, index: number): string {
  const tail = (parseInt(entryId.slice(-8), 16) + index) >>> 0;
  return entryId.slice(0, -8) + tail.toString(16).padStart(8, '0');
}

/** Gives a journaled change's events their ids (see `journalEventId`), in order. */
export function stampEvents(events: DomainEvent[], entryId: string): void {
  events.forEach((e, i) => {
    e.event.id = journalEventId(entryId, i);
  });
}
