import { Injectable } from '@nestjs/common';
import type { RemoteUpstream, WebhookEventConnection } from '@switchboard/contracts';
import { clientRecord, storedConnection } from '../model/records.js';
import type { ClientKey } from '../model/targets.js';
import { Pusher, type Delivery } from '../events/pusher.js';
import { LiveReads } from '../store/live-reads.js';
import { NatsMediaAgents } from './media-control-agent.js';
import type { MediaDomainEvent } from './media-control-context.js';

/**
 * The upstreams a client of a channel can receive (README, "Media servers (Janus)"): upstream sfu
 * connections publishing on a Janus server (connected), listed at join and announced to the other
 * clients of the channel as they start (`upstream.opened`) and end (`upstream.closed`).
 */
@Injectable()
export class Upstreams {
  constructor(
    private readonly reads: LiveReads,
    private readonly agents: NatsMediaAgents,
    private readonly pusher: Pusher,
  ) {}

  /** The channel's publishing upstreams of other clients than `client`. */
  async listFor(applicationId: string, channelId: string, client: ClientKey): Promise<RemoteUpstream[]> {
    // Without a Janus server (the simulator's heartbeat-only servers) nothing can be received.
    const janus = await this.agents.janusServers();
    if (janus.size === 0) return [];
    const paths = (await this.reads.channelConnections(applicationId, channelId)).filter(
      (path) => !sameClient(path, client),
    );
    if (paths.length === 0) return [];
    const views = await this.reads.connections(applicationId, channelId, paths);
    return views.flatMap((view) => {
      const conn = storedConnection(view.connection);
      if (conn.type !== 'sfu' || conn.remoteConnectionId !== null || conn.state !== 'connected') return [];
      if (!conn.mediaServerId || !janus.has(conn.mediaServerId)) return [];
      const registration = clientRecord(view, view.registration);
      return [
        {
          connectionId: view.connectionId,
          userId: view.userId,
          userAlias: registration.userAlias,
          deviceId: view.deviceId,
          deviceAlias: registration.deviceAlias,
          clientId: view.clientId,
          clientTag: registration.tag,
          audio: Boolean(conn.streams.audio),
          video: Boolean(conn.streams.video),
          data: Boolean(conn.streams.data),
        },
      ];
    });
  }

  /** Tells the other clients of each channel about the upstreams these events started or ended. */
  async announce(events: readonly MediaDomainEvent[]): Promise<void> {
    const janus = await this.agents.janusServers();
    const deliveries: Delivery[] = [];
    for (const event of events) {
      const change = upstreamChange(event, janus);
      if (change) deliveries.push(...(await this.toOthers(event.applicationId, change)));
    }
    await this.pusher.send(deliveries);
  }

  private async toOthers(applicationId: string, change: UpstreamChange): Promise<Delivery[]> {
    const { connection } = change;
    const members = (await this.reads.channelClients(applicationId, connection.channelId)).filter(
      (member) => !sameClient(member, connection),
    );
    const gateways = await this.reads.gatewaysOf(applicationId, members);
    const push =
      change.kind === 'opened'
        ? { type: 'upstream.opened' as const, channelId: connection.channelId, upstream: remoteUpstream(connection) }
        : { type: 'upstream.closed' as const, channelId: connection.channelId, connectionId: connection.id };
    return members.map((member, i) => ({
      gatewayId: gateways[i] ?? null,
      client: { applicationId, userId: member.userId, deviceId: member.deviceId, clientId: member.clientId },
      push,
    }));
  }
}

interface UpstreamChange {
  kind: 'opened' | 'closed';
  connection: WebhookEventConnection;
}

/** An upstream sfu connection on a Janus server that got connected, or ended. */
function upstreamChange(event: MediaDomainEvent, janus: ReadonlySet<string>): UpstreamChange | null {
  const { media } = event;
  const connection = event.event.connection;
  if (!media || !connection || !janus.has(media.mediaServerId)) return null;
  if (media.connectionType !== 'sfu' || media.remoteConnectionId !== null) return null;
  const type = event.event.type;
  if (type === 'connection.connected') return { kind: 'opened', connection };
  if (type === 'connection.closed' || type === 'connection.failed') return { kind: 'closed', connection };
  return null;
}

function remoteUpstream(connection: WebhookEventConnection): RemoteUpstream {
  return {
    connectionId: connection.id,
    userId: connection.userId,
    userAlias: connection.userAlias,
    deviceId: connection.deviceId,
    deviceAlias: connection.deviceAlias,
    clientId: connection.clientId,
    clientTag: connection.clientTag,
    audio: connection.hasAudio,
    video: connection.hasVideo,
    data: connection.hasData,
  };
}

function sameClient(a: ClientKey, b: ClientKey): boolean {
  return a.userId === b.userId && a.deviceId === b.deviceId && a.clientId === b.clientId;
}
