import { Inject, Injectable } from '@nestjs/common';
import {
  CONNECTION_STATES,
  type ChannelClaim,
  type ConnectionState,
  type EdgeGatewayClientsRead,
  type EdgeGatewayClientsResult,
  type EdgeSessionsRead,
  type EdgeSessionsResult,
  type EdgeSessionState,
} from '@switchboard/contracts';
import { clientRecord, parseJson } from '../model/records.js';
import { effectiveSettings, publicSettings } from '../model/settings.js';
import { HousekeepingStore } from '../store/housekeeping-store.js';
import { LiveStore, type ClientIds, type SessionSnapshot } from '../store/live-store.js';

/**
 * What the registry holds for a gateway's sessions (`gateway.sessions`) and which clients it holds
 * registrations of (`gateway.clients`): the gateway reconciles its sessions with them.
 */
@Injectable()
export class GatewaySessions {
  constructor(
    @Inject(LiveStore) private readonly store: Pick<LiveStore, 'sessions'>,
    @Inject(HousekeepingStore) private readonly gateways: Pick<HousekeepingStore, 'gatewayClients'>,
  ) {}

  /** One atomic read per application; the clients answered in the order asked. */
  async sessions(r: EdgeSessionsRead): Promise<EdgeSessionsResult> {
    const byApp = new Map<string, number[]>();
    r.clients.forEach((c, i) => {
      const list = byApp.get(c.applicationId);
      if (list) list.push(i);
      else byApp.set(c.applicationId, [i]);
    });
    const out = Array.from<EdgeSessionState | null>({ length: r.clients.length }).fill(null);
    await Promise.all(
      [...byApp].map(async ([a, asked]) => {
        const read = await this.store.sessions(
          a,
          asked.map((i) => r.clients[i]!),
        );
        asked.forEach((i, position) => {
          const s = read.clients[position];
          if (s) out[i] = sessionState(r.clients[i]!, s, read.seq);
        });
      }),
    );
    return { clients: out };
  }

  /** A page of the clients registered through a gateway replica (a client may come twice). */
  async gatewayClients(r: EdgeGatewayClientsRead): Promise<EdgeGatewayClientsResult> {
    return this.gateways.gatewayClients(r.gatewayId, r.cursor ?? '0', r.count ?? 200);
  }
}

function sessionState(c: ClientIds, s: SessionSnapshot, seq: number): EdgeSessionState {
  const client = clientRecord(c, s.client);
  return {
    gatewayId: client.gatewayId,
    sessionId: s.client.sessionId ?? null,
    userAlias: client.userAlias,
    deviceAlias: client.deviceAlias,
    tag: client.tag,
    roles: client.roles,
    channels: s.channels.map((ch) => ({
      channelId: ch.channelId,
      claim: parseJson<ChannelClaim>(ch.claim ?? undefined, { id: ch.channelId }),
      connections: ch.connections.map((connection) => ({
        connectionId: connection.connectionId,
        settings: publicSettings(effectiveSettings(connection.levels, { ...c, connectionId: connection.connectionId })),
        ...(isConnectionState(connection.state) ? { state: connection.state } : {}),
      })),
    })),
    settingsVersion: seq,
  };
}

function isConnectionState(state: string | null): state is ConnectionState {
  return (CONNECTION_STATES as readonly (string | null)[]).includes(state);
}
