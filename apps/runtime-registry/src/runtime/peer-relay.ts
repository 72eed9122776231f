import { Inject, Injectable } from '@nestjs/common';
import { DomainError, type EdgeResults, type ServerPush } from '@switchboard/contracts';
import { Pusher } from '../events/pusher.js';
import { storedConnection } from '../model/records.js';
import { LiveReads } from '../store/live-reads.js';
import type { Report } from './edge-steps.js';

/** The reads the relay needs (LiveReads). */
export type PeerReads = Pick<LiveReads, 'channelConnections' | 'connections' | 'gatewaysOf'>;

/**
 * Relays the signalling of `peer` connections (no media server): a connection names the other
 * side with its `remoteConnectionId`, which must name it back, in the same channel; the signal goes
 * to the other client's gateway as a `connection.relayed` push (at most once, like every push).
 */
@Injectable()
export class PeerRelay {
  constructor(
    @Inject(LiveReads) private readonly reads: PeerReads,
    private readonly pusher: Pusher,
  ) {}

  async relay(r: Report<'connection.relay'>): Promise<EdgeResults['connection.relay']> {
    const a = r.client.applicationId;
    const { userId, deviceId, clientId } = r.client;
    const sender = { userId, deviceId, clientId, connectionId: r.connectionId };
    const [own] = await this.reads.connections(a, r.channelId, [sender]);
    const conn = own && own.connection.type ? storedConnection(own.connection) : null;
    if (!conn) throw new DomainError('NotFound', `Connection ${r.connectionId} is not open.`);
    if (conn.type !== 'peer' || !conn.remoteConnectionId)
      throw new DomainError('ValidationFailed', 'Only a peer connection naming its remote connection is relayed.', [
        { field: 'connectionId', message: 'not a peer connection with a remoteConnectionId' },
      ]);
    const remoteId = conn.remoteConnectionId;
    const remote = await remotePeer(this.reads, a, r.channelId, remoteId);
    if (!remote)
      throw new DomainError('NotFound', `The remote peer connection ${remoteId} is not open in the channel.`);
    if (remote.remoteConnectionId !== r.connectionId)
      throw new DomainError('ValidationFailed', `Connection ${remoteId} does not name ${r.connectionId} back.`, [
        { field: 'connectionId', message: 'the remote peer connection names another connection' },
      ]);
    const client = { userId: remote.userId, deviceId: remote.deviceId, clientId: remote.clientId };
    const [gatewayId] = await this.reads.gatewaysOf(a, [client]);
    const push: ServerPush = {
      type: 'connection.relayed',
      channelId: r.channelId,
      connectionId: remoteId,
      remoteConnectionId: r.connectionId,
      ...r.signal,
    };
    await this.pusher.send([{ gatewayId: gatewayId ?? null, client: { applicationId: a, ...client }, push }]);
    return { ok: true };
  }
}

/** The open peer connection of the channel with that id, and the connection it names (null: none open). */
export async function remotePeer(reads: PeerReads, applicationId: string, channelId: string, connectionId: string) {
  const paths = (await reads.channelConnections(applicationId, channelId)).filter(
    (path) => path.connectionId === connectionId,
  );
  const views = paths.length ? await reads.connections(applicationId, channelId, paths) : [];
  for (const view of views) {
    const stored = view.connection.type !== undefined ? storedConnection(view.connection) : null;
    if (stored?.type === 'peer') return { ...view, remoteConnectionId: stored.remoteConnectionId };
  }
  return null;
}
