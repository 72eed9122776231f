import { Inject, Injectable } from '@nestjs/common';
import {
  DomainError,
  MediaAgentSubjects,
  type MediaAgentCommand,
  type MediaAgentResults,
  type SyncRequestDataOf,
  type SyncResults,
} from '@switchboard/contracts';
import { NatsClient, SERVICE_CONFIG } from '@switchboard/service-kit';
import type { GatewayConfig } from '../config.js';
import type { ClientSession, EdgeConnection } from '../sync/client-session.js';
import { connectionOf } from '../sync/connection-steps.js';

/**
 * The media signalling requests of `/sync` (docs/sync-protocol.md, "Media signalling"): the gateway
 * hands the client's SDP and ICE to the media-agent of the server the registry placed the
 * connection on, and answers with Janus's. States then follow the media (the registry hears Janus).
 */
@Injectable()
export class MediaSignalling {
  constructor(
    private readonly nats: NatsClient,
    @Inject(SERVICE_CONFIG) private readonly config: GatewayConfig,
  ) {}

  /** An upstream `sfu` connection publishes, an `mcu` one joins the mix: Janus answers the offer. */
  async offer(
    session: ClientSession,
    data: SyncRequestDataOf<'connection.offer'>,
  ): Promise<SyncResults['connection.offer']> {
    const { connection, mediaServerId } = placed(session, data.connectionId);
    const target = { ...channelOf(session, connection), connectionId: connection.connectionId };
    const display = session.userAlias ?? session.ref.userId;
    if (connection.type === 'mcu') {
      await this.command(mediaServerId, { kind: 'mixer.create', ...channelOf(session, connection) });
      const { answer } = await this.command(mediaServerId, {
        kind: 'mixer.join',
        ...target,
        display,
        offer: data.offer,
      });
      return { connectionId: connection.connectionId, answer: { type: 'answer', sdp: answer.sdp } };
    }
    if (connection.remoteConnectionId !== null)
      throw new DomainError('ValidationFailed', 'A downstream connection receives the offer of the media server.', [
        { field: 'connectionId', message: 'downstream (it names a remoteConnectionId): send connection.subscribe' },
      ]);
    await this.command(mediaServerId, { kind: 'room.create', ...channelOf(session, connection) });
    const { answer } = await this.command(mediaServerId, {
      kind: 'publisher.join',
      ...target,
      display,
      offer: data.offer,
    });
    return { connectionId: connection.connectionId, answer: { type: 'answer', sdp: answer.sdp } };
  }

  /** A downstream `sfu` connection: the media server offers the remote upstream it receives. */
  async subscribe(
    session: ClientSession,
    data: SyncRequestDataOf<'connection.subscribe'>,
  ): Promise<SyncResults['connection.subscribe']> {
    const { connection, mediaServerId } = placed(session, data.connectionId);
    if (connection.type !== 'sfu' || connection.remoteConnectionId === null)
      throw new DomainError('ValidationFailed', 'Only a downstream sfu connection subscribes.', [
        { field: 'connectionId', message: 'not an sfu connection naming a remoteConnectionId' },
      ]);
    const { offer } = await this.command(mediaServerId, {
      kind: 'subscriber.join',
      ...channelOf(session, connection),
      connectionId: connection.connectionId,
      remoteConnectionId: connection.remoteConnectionId,
    });
    return { connectionId: connection.connectionId, offer: { type: 'offer', sdp: offer.sdp } };
  }

  /** The client's answer to the media server's offer (of `connection.subscribe` or a renegotiation). */
  async answer(
    session: ClientSession,
    data: SyncRequestDataOf<'connection.answer'>,
  ): Promise<SyncResults['connection.answer']> {
    const { connection, mediaServerId } = placed(session, data.connectionId);
    if (connection.type !== 'sfu' || connection.remoteConnectionId === null)
      throw new DomainError('ValidationFailed', 'Only a downstream sfu connection answers the media server.', [
        { field: 'connectionId', message: 'not an sfu connection naming a remoteConnectionId' },
      ]);
    await this.command(mediaServerId, {
      kind: 'subscriber.answer',
      ...channelOf(session, connection),
      connectionId: connection.connectionId,
      answer: data.answer,
    });
    return { connectionId: connection.connectionId };
  }

  /** Trickle ICE from the client (Janus's own candidates are in its SDP). */
  async candidates(
    session: ClientSession,
    data: SyncRequestDataOf<'connection.candidates'>,
  ): Promise<SyncResults['connection.candidates']> {
    const { connection, mediaServerId } = placed(session, data.connectionId);
    await this.command(mediaServerId, {
      kind: 'connection.trickle',
      ...channelOf(session, connection),
      connectionId: connection.connectionId,
      candidates: data.candidates,
      ...(data.completed !== undefined ? { completed: data.completed } : {}),
    });
    return { connectionId: connection.connectionId };
  }

  private async command<C extends MediaAgentCommand>(
    mediaServerId: string,
    command: C,
  ): Promise<MediaAgentResults[C['kind']]> {
    const subject = MediaAgentSubjects.command(mediaServerId);
    try {
      const timeoutMs = this.config.mediaSignallingTimeoutMs;
      return (await this.nats.request(subject, command, { timeoutMs })) as MediaAgentResults[C['kind']];
    } catch (error) {
      // No agent answers for a heartbeat-only server (the simulator's): say so rather than "unavailable".
      if (
        error instanceof DomainError &&
        error.code === 'Unavailable' &&
        /no instance of the service/.test(error.message)
      )
        throw new DomainError('Unavailable', `Media server ${mediaServerId} takes no signalling (no media-agent).`);
      throw error;
    }
  }
}

function channelOf(session: ClientSession, connection: EdgeConnection) {
  return { applicationId: session.ref.applicationId, channelId: connection.channelId };
}

/** The connection and the media server it was placed on (the open must have been answered). */
function placed(session: ClientSession, connectionId: string): { connection: EdgeConnection; mediaServerId: string } {
  const connection = connectionOf(session, connectionId);
  if (connection.mediaServerId === null)
    throw new DomainError('ValidationFailed', `Connection ${connectionId} is not placed on a media server.`, [
      { field: 'connectionId', message: `a ${connection.type} connection has no media server to signal with` },
    ]);
  return { connection, mediaServerId: connection.mediaServerId };
}
