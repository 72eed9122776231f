import { Injectable } from '@nestjs/common';
import { DomainError, type PeerSignal, type SyncRequestDataOf, type SyncResults } from '@switchboard/contracts';
import type { ClientSession } from '../sync/client-session.js';
import { connectionOf } from '../sync/connection-steps.js';
import { EdgeClient } from '../sync/edge.client.js';

const SIGNAL_FIELDS = ['offer', 'answer', 'candidates'] as const;

/**
 * `connection.relay`: the signalling of a `peer` connection has no media server to go to; the
 * registry hands it to the client of the other side (docs/sync-protocol.md, "Media signalling").
 */
@Injectable()
export class PeerRelayClient {
  constructor(private readonly edge: EdgeClient) {}

  async relay(
    session: ClientSession,
    data: SyncRequestDataOf<'connection.relay'>,
  ): Promise<SyncResults['connection.relay']> {
    const connection = connectionOf(session, data.connectionId);
    if (connection.type !== 'peer')
      throw new DomainError(
        'ValidationFailed',
        'Only peer connections are relayed; the others signal with their media server.',
        [{ field: 'connectionId', message: `a ${connection.type} connection` }],
      );
    const given = SIGNAL_FIELDS.filter((field) => data[field] !== undefined);
    if (given.length !== 1)
      throw new DomainError('ValidationFailed', 'Send exactly one of offer, answer, candidates.', [
        { field: given[1] ?? 'offer', message: given.length ? 'only one of offer, answer, candidates' : 'missing' },
      ]);
    const { connectionId: _id, ...signal } = data;
    await this.edge.report({
      kind: 'connection.relay',
      client: session.ref,
      channelId: connection.channelId,
      connectionId: connection.connectionId,
      signal: signal as PeerSignal,
    });
    return { connectionId: connection.connectionId };
  }
}
