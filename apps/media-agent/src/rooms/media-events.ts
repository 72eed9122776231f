import { MediaAgentSubjects, type MediaAgentEvent, type MediaAgentEventEnvelope } from '@switchboard/contracts';
import type { JsonLogger, NatsClient } from '@switchboard/service-kit';

/**
 * Publishes the agent's media events on `media-agent.v1.<mediaServerId>.events` (core NATS, in
 * the packet format of Nest's NATS server, so a handler is an `@EventPattern`). At most once: a
 * consumer that missed one reconciles with the agent.
 */
export class MediaEvents {
  private readonly subject: string;
  private readonly pattern: string;
  private readonly listeners = new Set<(event: MediaAgentEvent) => void>();

  constructor(
    private readonly nats: NatsClient,
    private readonly logger: JsonLogger,
    private readonly mediaServerId: string,
  ) {
    this.pattern = MediaAgentSubjects.events(mediaServerId);
    this.subject = nats.subject(this.pattern);
  }

  /** Calls `listener` with every event this agent publishes (e.g. recording stops at `connection.ended`). */
  onPublish(listener: (event: MediaAgentEvent) => void): void {
    this.listeners.add(listener);
  }

  publish(event: MediaAgentEvent): void {
    for (const listener of this.listeners) listener(event);
    const data: MediaAgentEventEnvelope = { mediaServerId: this.mediaServerId, time: new Date().toISOString(), event };
    this.nats.connection$().then(
      (nc) => nc.publish(this.subject, JSON.stringify({ pattern: this.pattern, data })),
      (e: unknown) => this.logger.event('warn', 'media event not published', { error: (e as Error).message }),
    );
  }
}
