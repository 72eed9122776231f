import { Inject, Injectable } from '@nestjs/common';
import type { ClientRef } from '@switchboard/contracts';
import { REDIS } from '@switchboard/service-kit';
import type { Redis } from 'ioredis';
import { clientMember, esc, KEY_PREFIX, RegistryKeys, splitMember, type ServerRole } from './keys.js';

const RELEASE_SCRIPT = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
/** Removes an index entry that is still not in use and older than ARGV[2]. KEYS: index. ARGV: application, cutoff. */
const DROP_STALE_SCRIPT = `
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v and string.match(v, '^%d+:0:') and tonumber(string.match(v, '^(%d+)')) < tonumber(ARGV[2]) then
  return redis.call('HDEL', KEYS[1], ARGV[1])
end
return 0`;

/** An application's own in-use flag, generation and owner (its base hash). */
export interface ApplicationState {
  applicationId: string;
  inUse: string | null;
  gen: string | null;
  organizationId: string | null;
}

/** A page of a gateway replica's clients; `next` null when done. */
export interface GatewayClientsPage {
  clients: ClientRef[];
  next: string | null;
}

/**
 * What the housekeeping pass reads and writes besides the scripts: its lock, the last heartbeats of
 * gateways and servers, the clients each gateway replica holds, and the applications index's repairs.
 */
@Injectable()
export class HousekeepingStore {
  private readonly keys: RegistryKeys;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(KEY_PREFIX) prefix: string,
  ) {
    this.keys = new RegistryKeys(prefix);
  }

  async takeLock(owner: string, leaseMs: number): Promise<boolean> {
    return (await this.redis.set(this.keys.sweeperLock(), owner, 'PX', leaseMs, 'NX')) === 'OK';
  }

  /** Releases the lock if `owner` still holds it. */
  async releaseLock(owner: string): Promise<void> {
    await this.redis.eval(RELEASE_SCRIPT, 1, this.keys.sweeperLock(), owner);
  }

  /** The servers of a role whose last heartbeat is older than `cutoff` (Unix ms, Redis clock). */
  silentSince(role: ServerRole, cutoff: number): Promise<string[]> {
    return this.redis.zrangebyscore(this.keys.serverSeen(role), '-inf', `(${cutoff}`);
  }

  silentCount(role: ServerRole, cutoff: number): Promise<number> {
    return this.redis.zcount(this.keys.serverSeen(role), '-inf', `(${cutoff}`);
  }

  /** The last heartbeat of a server (Unix ms, Redis clock); null when none is recorded. */
  async lastHeartbeat(role: ServerRole, id: string): Promise<number | null> {
    const seen = await this.redis.zscore(this.keys.serverSeen(role), id);
    return seen === null ? null : Number(seen);
  }

  gatewayClientCount(gatewayId: string): Promise<number> {
    return this.redis.scard(this.keys.gatewayClients(gatewayId));
  }

  /** A page of the clients registered through a gateway replica (SSCAN: a client may come twice). */
  async gatewayClients(gatewayId: string, cursor: string, count: number): Promise<GatewayClientsPage> {
    const [next, members] = await this.redis.sscan(this.keys.gatewayClients(gatewayId), cursor, 'COUNT', count);
    return {
      clients: members.map((member) => {
        const [applicationId = '', userId = '', deviceId = '', clientId = ''] = splitMember(member);
        return { applicationId, userId, deviceId, clientId };
      }),
      next: next === '0' ? null : next,
    };
  }

  /** Takes a client off a gateway replica's client set. */
  async forgetGatewayClient(gatewayId: string, c: ClientRef): Promise<void> {
    const member = `${esc(c.applicationId)}/${clientMember(c.userId, c.deviceId, c.clientId)}`;
    await this.redis.srem(this.keys.gatewayClients(gatewayId), member);
  }

  /** A page of the applications' own states (SCAN over their base hashes); `next` null when done. */
  async applicationStates(cursor: string): Promise<{ states: ApplicationState[]; next: string | null }> {
    const [next, keys] = await this.redis.scan(cursor, 'MATCH', this.keys.appBasePattern(), 'COUNT', 500);
    const states: ApplicationState[] = [];
    for (const key of keys) {
      const applicationId = this.keys.appOf(key);
      if (applicationId === null) continue;
      const [inUse, gen, organizationId] = await this.redis.hmget(key, 'inUse', 'gen', 'organizationId');
      states.push({ applicationId, inUse, gen, organizationId });
    }
    return { states, next: next === '0' ? null : next };
  }

  /** Drops an application's index entry if it is still unused since before `cutoff` (Unix ms). */
  async dropStaleIndexEntry(applicationId: string, cutoff: number): Promise<void> {
    await this.redis.eval(DROP_STALE_SCRIPT, 1, this.keys.appsIndex(), applicationId, String(cutoff));
  }
}
