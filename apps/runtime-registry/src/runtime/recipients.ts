import { Inject, Injectable } from '@nestjs/common';
import { DomainError, type MessageTarget } from '@switchboard/contracts';
import { candidateScope, matchesTarget, type ClientKey } from '../model/targets.js';
import { LiveReads } from '../store/live-reads.js';

/** The reads the recipients of a message target need (LiveReads). */
export type RecipientReads = Pick<
  LiveReads,
  'applicationClients' | 'channelClients' | 'userClients' | 'deviceClientIds' | 'clientRegistered' | 'gatewaysOf'
>;

export interface Recipient extends ClientKey {
  gatewayId: string | null;
}

/** Resolves a message target to the clients it reaches, with the gateway replica holding each. */
@Injectable()
export class Recipients {
  constructor(@Inject(LiveReads) private readonly reads: RecipientReads) {}

  async resolve(target: MessageTarget, opts: { allowEmpty?: boolean } = {}): Promise<Recipient[]> {
    const a = target.applicationId;
    const picked = (await this.candidates(target)).filter((c) => matchesTarget(target, c));
    if (picked.length === 0 && !opts.allowEmpty) throw new DomainError('NotFound', notFoundMessage(target));
    const gateways = await this.reads.gatewaysOf(a, picked);
    return picked.map((c, i) => ({ ...c, gatewayId: gateways[i] ?? null })).sort(byClient);
  }

  /** The clients a target may reach, read at the level that holds them. */
  private async candidates(target: MessageTarget): Promise<ClientKey[]> {
    const a = target.applicationId;
    const scope = candidateScope(target);
    switch (scope.kind) {
      case 'application':
        return this.reads.applicationClients(a);
      case 'channel':
        return this.reads.channelClients(a, scope.channelId);
      case 'user':
        return this.reads.userClients(a, scope.userId);
      case 'device': {
        const clientIds = await this.reads.deviceClientIds(a, scope.userId, scope.deviceId);
        return clientIds.map((clientId) => ({ userId: scope.userId, deviceId: scope.deviceId, clientId }));
      }
      case 'client': {
        const client = { userId: scope.userId, deviceId: scope.deviceId, clientId: scope.clientId };
        return (await this.reads.clientRegistered({ applicationId: a, ...client })) ? [client] : [];
      }
    }
  }
}

function byClient(a: ClientKey, b: ClientKey): number {
  return (
    a.userId.localeCompare(b.userId) || a.deviceId.localeCompare(b.deviceId) || a.clientId.localeCompare(b.clientId)
  );
}

function notFoundMessage(t: MessageTarget): string {
  switch (t.level) {
    case 'application':
      return `Application '${t.applicationId}' has no registered client.`;
    case 'channel':
      return `Channel '${t.channelId}' is not active.`;
    case 'user':
      return `User '${t.userId}' has no registered client.`;
    case 'channel.user':
      return `User '${t.userId}' is not in channel '${t.channelId}'.`;
    case 'device':
      return `Device '${t.deviceId}' of user '${t.userId}' has no registered client.`;
    case 'channel.device':
      return `Device '${t.deviceId}' of user '${t.userId}' is not in channel '${t.channelId}'.`;
    case 'client':
      return `Client '${t.clientId}' is not registered.`;
    case 'channel.client':
      return `Client '${t.clientId}' is not in channel '${t.channelId}'.`;
  }
}
