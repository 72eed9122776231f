import { Inject, Injectable } from '@nestjs/common';
import { LiveReads } from '../store/live-reads.js';
import { remotePeer, type PeerReads } from '../runtime/peer-relay.js';
import type { MediaDomainEvent } from './media-control-context.js';
import { MediaEvents } from './media-events.js';

/**
 * A peer connection that ends takes its other side with it: no media server sees a peer
 * connection, so the registry closes the connection naming it back and tells that client
 * (`connection.ended`, `remote-left`, or `remote-kicked` after a kick of interface A).
 */
@Injectable()
export class PeerEnds {
  constructor(
    @Inject(LiveReads) private readonly reads: PeerReads,
    @Inject(MediaEvents) private readonly media: Pick<MediaEvents, 'remotePeerEnded'>,
  ) {}

  async settle(events: readonly MediaDomainEvent[]): Promise<void> {
    for (const event of events) {
      const { type, connection, origin } = event.event;
      if (type !== 'connection.closed' && type !== 'connection.failed') continue;
      if (!connection || connection.type !== 'peer' || !connection.remoteConnectionId) continue;
      const { channelId } = connection;
      const remote = await remotePeer(this.reads, event.applicationId, channelId, connection.remoteConnectionId);
      if (!remote || remote.remoteConnectionId !== connection.id) continue;
      const { userId, deviceId, clientId, connectionId } = remote;
      const reason = type === 'connection.closed' && origin === 'api' ? 'remote-kicked' : 'remote-left';
      await this.media.remotePeerEnded(
        event.applicationId,
        { userId, deviceId, clientId, channelId, connectionId },
        reason,
      );
    }
  }
}
