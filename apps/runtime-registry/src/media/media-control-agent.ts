import { Inject, Injectable } from '@nestjs/common';
import {
  DomainError,
  MediaAgentSubjects,
  type MediaAgentCommand,
  type MediaAgentCommandKind,
  type MediaAgentResult,
} from '@switchboard/contracts';
import { NatsClient, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { RegistryConfig } from '../config.js';
import { ServersStore } from '../store/servers-store.js';

/** The media-agents, as the media control and the reconciliation see them (the seam of their tests). */
export interface MediaAgents {
  send<K extends MediaAgentCommandKind>(
    mediaServerId: string,
    command: Extract<MediaAgentCommand, { kind: K }>,
  ): Promise<MediaAgentResult<K>>;
  /** The media servers an agent commands (heartbeat `type: 'janus'`) that are alive. */
  janusServers(): Promise<ReadonlySet<string>>;
}

/** How long a read of the Janus servers is reused (a mute must not wait for Redis every time). */
const SERVERS_CACHE_MS = 1000;

/** Commands over NATS request/reply (`<ns>.media-agent.v1.<mediaServerId>.command`). */
@Injectable()
export class NatsMediaAgents implements MediaAgents {
  private cached?: { at: number; ids: Promise<ReadonlySet<string>> };

  constructor(
    private readonly nats: NatsClient,
    private readonly servers: ServersStore,
    @Inject(SERVICE_CONFIG) private readonly config: RegistryConfig,
  ) {}

  async send<K extends MediaAgentCommandKind>(
    mediaServerId: string,
    command: Extract<MediaAgentCommand, { kind: K }>,
  ): Promise<MediaAgentResult<K>> {
    const timeoutMs = this.config.mediaAgentTimeoutMs;
    const answer = await this.nats.request(MediaAgentSubjects.command(mediaServerId), command, { timeoutMs });
    return answer as MediaAgentResult<K>;
  }

  janusServers(): Promise<ReadonlySet<string>> {
    const now = Date.now();
    if (!this.cached || now - this.cached.at > SERVERS_CACHE_MS) {
      const ids = this.servers
        .list('mediaserver')
        .then((views) => new Set(views.filter((v) => v.type === 'janus' && v.alive).map((v) => v.id)));
      ids.catch(() => (this.cached = undefined));
      this.cached = { at: now, ids };
    }
    return this.cached.ids;
  }
}

/** An agent error worth another attempt soon (the agent or NATS busy or restarting). */
export function isTransient(e: unknown): boolean {
  return e instanceof DomainError && (e.code === 'Unavailable' || e.code === 'Timeout');
}

/** The agent no longer holds it: the command's goal is reached already. */
export function isGone(e: unknown): boolean {
  return e instanceof DomainError && e.code === 'NotFound';
}
