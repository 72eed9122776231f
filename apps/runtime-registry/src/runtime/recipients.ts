import { Injectable } from '@nestjs/common';
import { DomainError, type MessageTarget } from '@switchboard/contracts';
import { candidateScope, matchesTarget, type ClientKey } from '../model/targets.js';
import { clientMember, esc, splitMember, unesc } from '../store/keys.js';
import { LiveStore } from '../store/live-store.js';

export interface Recipient extends ClientKey {
  gatewayId: string | null;
}

/** Resolves a message target to the clients it reaches, with the gateway replica holding each. */
@Injectable()
export class Recipients {
  constructor(private readonly store: LiveStore) {}

  async resolve(target: MessageTarget, opts: { allowEmpty?: boolean } = {}): Promise<Recipient[]> {
    const a = target.applicationId;
    const scope = candidateScope(target);
    const k = this.store.keys;
    let members: string[];
    switch (scope.kind) {
      case 'application':
        members = await this.store.redis.smembers(k.appClients(a));
        break;
      case 'channel':
        members = await this.store.redis.hkeys(k.channelPart(a, scope.channelId, 'clients'));
        break;
      case 'user': {
        const devices = await this.store.redis.hkeys(k.userDevices(a, scope.userId));
        const lists = (await this.store.read(
          devices.map((d) => ['smembers', k.deviceClients(a, scope.userId, unesc(d))]),
        )) as string[][];
        members = devices.flatMap((d, i) => (lists[i] ?? []).map((cl) => `${esc(scope.userId)}/${d}/${cl}`));
        break;
      }
      case 'device':
        members = (await this.store.redis.smembers(k.deviceClients(a, scope.userId, scope.deviceId))).map(
          (cl) => `${esc(scope.userId)}/${esc(scope.deviceId)}/${cl}`,
        );
        break;
      case 'client': {
        const exists = await this.store.redis.exists(k.client(a, scope.userId, scope.deviceId, scope.clientId));
        members = exists ? [clientMember(scope.userId, scope.deviceId, scope.clientId)] : [];
        break;
      }
    }
    const candidates = members.map((m) => {
      const [userId = '', deviceId = '', clientId = ''] = splitMember(m);
      return { userId, deviceId, clientId };
    });
    const picked = candidates.filter((c) => matchesTarget(target, c));
    if (picked.length === 0 && !opts.allowEmpty) throw new DomainError('NotFound', notFoundMessage(target));
    const gateways = (await this.store.read(
      picked.map((c) => ['hget', k.client(a, c.userId, c.deviceId, c.clientId), 'gatewayId']),
    )) as Array<string | null>;
    return picked.map((c, i) => ({ ...c, gatewayId: gateways[i] ?? null })).sort(byClient);
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
