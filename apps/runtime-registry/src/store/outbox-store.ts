import { Inject, Injectable } from '@nestjs/common';
import { REDIS } from '@switchboard/service-kit';
import type { Redis } from 'ioredis';
import { KEY_PREFIX, RegistryKeys } from './keys.js';

/**
 * Appends events to the outbox (chunks: Lua's unpack has a limit) and answers the value the
 * outbox's head counter will have once the last of them is relayed.
 * KEYS: outbox, head counter. ARGV: the events.
 */
const APPEND_SCRIPT = `
local len = 0
for i = 1, #ARGV, 1000 do
  len = redis.call('RPUSH', KEYS[1], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
return tonumber(redis.call('GET', KEYS[2]) or '0') + len`;

/**
 * Removes relayed events from the head of the outbox, each only if it still is the head (a relay
 * that lost its lock removes nothing another removed), setting aside (`r`) those the stream can
 * never take; counts every removal in the head counter. Answers { head counter, events left }.
 * KEYS: outbox, head counter, set-aside list. ARGV: pairs (kind, event) in outbox order.
 */
const REMOVE_SCRIPT = `
local removed = 0
for i = 1, #ARGV, 2 do
  if redis.call('LINDEX', KEYS[1], 0) == ARGV[i + 1] then
    redis.call('LPOP', KEYS[1])
    if ARGV[i] == 'r' then redis.call('RPUSH', KEYS[3], ARGV[i + 1]) end
    removed = removed + 1
  end
end
return { redis.call('INCRBY', KEYS[2], removed), redis.call('LLEN', KEYS[1]) }`;

const RENEW_SCRIPT =
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0";
const RELEASE_SCRIPT = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

/** How a relayed event leaves the outbox: stored by the stream (`s`) or refused for good and set aside (`r`). */
export type Departure = ['s' | 'r', string];

/**
 * The outbox of events parked while the stream was unavailable (`P rt:outbox`), in order, with the
 * count of events that ever left it (`:head`), the relay lock (`:relay`) and the events set aside (`:refused`).
 */
@Injectable()
export class OutboxStore {
  private readonly outboxKey: string;
  private readonly headKey: string;
  private readonly lockKey: string;
  /** Events the stream refused for good, kept for an operator. */
  readonly refusedKey: string;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(KEY_PREFIX) prefix: string,
  ) {
    this.outboxKey = new RegistryKeys(prefix).outbox();
    this.headKey = `${this.outboxKey}:head`;
    this.lockKey = `${this.outboxKey}:relay`;
    this.refusedKey = `${this.outboxKey}:refused`;
  }

  async holdsEvents(): Promise<boolean> {
    return (await this.redis.exists(this.outboxKey)) === 1;
  }

  /** Appends events (JSON texts); answers the head counter's value once the last of them has left. */
  async append(events: string[]): Promise<number> {
    return Number(await this.redis.eval(APPEND_SCRIPT, 2, this.outboxKey, this.headKey, ...events));
  }

  /** How many events ever left the outbox (relayed or set aside). */
  async departedCount(): Promise<number> {
    return Number((await this.redis.get(this.headKey)) ?? 0);
  }

  /** The oldest `count` events. */
  oldest(count: number): Promise<string[]> {
    return this.redis.lrange(this.outboxKey, 0, count - 1);
  }

  /** Removes relayed events from the head; answers the head counter and how many events are left. */
  async remove(departures: Departure[]): Promise<{ departed: number; left: number }> {
    const [departed, left] = (await this.redis.eval(
      REMOVE_SCRIPT,
      3,
      this.outboxKey,
      this.headKey,
      this.refusedKey,
      ...departures.flat(),
    )) as [number, number];
    return { departed: Number(departed), left: Number(left) };
  }

  async takeRelayLock(owner: string, leaseMs: number): Promise<boolean> {
    return (await this.redis.set(this.lockKey, owner, 'PX', leaseMs, 'NX')) === 'OK';
  }

  /** Renews the lease while `owner` holds the lock; false when it lost it. */
  async renewRelayLock(owner: string, leaseMs: number): Promise<boolean> {
    return Number(await this.redis.eval(RENEW_SCRIPT, 1, this.lockKey, owner, leaseMs)) === 1;
  }

  async releaseRelayLock(owner: string): Promise<void> {
    await this.redis.eval(RELEASE_SCRIPT, 1, this.lockKey, owner);
  }
}
