import type { ClientRef } from '@switchboard/contracts';
import type { ClientIds } from './store-types.js';
/**
 * Redis key layout of the live model. Every key starts with the deployment's REDIS_KEY_PREFIX (`P`)
 * followed by `rt:` (the registry's own namespace: the diagnostics dump scans `P rt:*` only).
 *
 * Ids are escaped before they become part of a key or a member (`%`, `/`, `:`, `{`, `}` and
 * control/space characters as `%XX`), so `/` can join them into composite members without
 * ambiguity: a device is `u/d`, a client `u/d/cl`, a connection inside a channel `u/d/cl/cn`.
 *
 * One application = one hash slot: every key of application `a` carries the hash tag `{a}`, so each
 * operation on it runs as ONE Lua script (see scripts.ts) touching only keys of that slot, plus,
 * for register, open and state changes, the declared keys of the servers slot their bookkeeping
 * needs (gateway client set, placement and statistics; one Redis serves the registry).
 *
 *   P rt:apps                               hash a -> "<gen>:<0|1>:<organizationId>"  applications index
 *                                           (in use = 1); `gen` orders updates coming from different
 *                                           replicas, the highest wins (see `indexApply`)
 *   P rt:app:{a}                            hash organizationId, inUse, gen, seq (settings order)
 *   P rt:app:{a}:clients                    set u/d/cl          registered clients
 *   P rt:app:{a}:users                      hash u -> n         registered clients per user
 *   P rt:app:{a}:devices                    hash u/d -> n       registered clients per device
 *   P rt:app:{a}:channels                   hash ch -> n        active channels -> member clients
 *   P rt:app:{a}:conns                      set ch/u/d/cl/cn    open connections
 *   P rt:app:{a}:u:<u>                      hash alias
 *   P rt:app:{a}:u:<u>:devices              hash d -> n         the user's devices -> registered clients
 *   P rt:app:{a}:u:<u>:channels             hash ch -> n        channels of the user -> its clients in it
 *   P rt:app:{a}:d:<u/d>                    hash alias
 *   P rt:app:{a}:d:<u/d>:clients            set cl
 *   P rt:app:{a}:d:<u/d>:channels           hash ch -> n
 *   P rt:app:{a}:c:<u/d/cl>                 hash userAlias deviceAlias tag roles protocol gatewayId
 *                                                claims registeredAt
 *   P rt:app:{a}:c:<u/d/cl>:channels        set ch              channels the client joined
 *   P rt:app:{a}:ch:<ch>                    hash activatedAt
 *   P rt:app:{a}:ch:<ch>:clients            hash u/d/cl -> channel claim (JSON)   membership
 *   P rt:app:{a}:ch:<ch>:users              hash u -> n         member clients per user
 *   P rt:app:{a}:ch:<ch>:devices            hash u/d -> n       member clients per device
 *   P rt:app:{a}:ch:<ch>:udev               hash u -> n         member devices per user
 *   P rt:app:{a}:ch:<ch>:conns              set u/d/cl/cn       connections in the channel
 *   P rt:app:{a}:ch:<ch>:uconns             hash u -> n         connections per user in the channel
 *   P rt:app:{a}:ch:<ch>:dconns             hash u/d -> n       connections per device in the channel
 *   P rt:app:{a}:ch:<ch>:cconn:<u/d/cl>     set cn              connections of a client in the channel
 *   P rt:app:{a}:ch:<ch>:cfg                hash  channel-level settings
 *   P rt:app:{a}:ch:<ch>:ucfg:<u>           hash  user-in-channel settings
 *   P rt:app:{a}:ch:<ch>:dcfg:<u/d>         hash  device-in-channel settings
 *   P rt:app:{a}:ch:<ch>:ccfg:<u/d/cl>      hash  client-in-channel settings
 *   P rt:app:{a}:cn:<ch/u/d/cl/cn>          hash  connection record (state, type, tag, streams, ...)
 *   P rt:app:{a}:cn:<ch/u/d/cl/cn>:cfg      hash  connection-level settings
 *
 * A settings hash holds, per setting, its value and `<setting>@` = the application's `seq` when it
 * was written (the latest write among the levels that reach a connection wins), plus the level's
 * excluded id lists as JSON arrays.
 *
 * Servers (one slot `{servers}`, so placement compares every media server atomically):
 *   P rt:srv:{servers}:<role>               hash id -> server JSON (role: mediaserver, connector,
 *                                           gateway, recording)
 *   P rt:srv:{servers}:<role>:seen          zset id -> last heartbeat (Unix ms, Redis clock)
 *   P rt:srv:{servers}:mediaserver:disabled set  ids disabled with PATCH active:false
 *   P rt:srv:{servers}:mediaserver:load     zset id -> pending + active connections
 *   P rt:srv:{servers}:mediaserver:stats:<id>  hash pending active closed failed durationMs failedDurationMs
 *   P rt:srv:{servers}:mediaserver:apps:<id>   hash a -> connections of the application on it
 *   P rt:srv:{servers}:gateway:clients:<gw> set a/u/d/cl        clients a gateway replica holds
 *   P rt:srv:{servers}:sweeper              string  lock of the housekeeping pass
 *   P rt:outbox                             list  events parked while JetStream was unavailable (new ones queue behind
 * them)
 *   P rt:outbox:head                        string  events relayed from the outbox so far (a waiting publish reads it)
 *   P rt:outbox:relay                       string  lease of the one relay running (renewed per batch)
 *   P rt:outbox:refused                     list  parked events the stream can never take (too large), set aside
 *   P rt:journal                            hash  entry id -> "<µs>\n<context>\n<answer>": changes whose events are
 *                                           not yet published or parked (written by the change's script,
 *                                           see events/journal.ts)
 *
 * No secret is ever written to Redis: shared secrets stay in management-api and the gateway.
 */

export const KEY_PREFIX = Symbol('KEY_PREFIX');

// oxlint-disable-next-line no-control-regex -- control characters are among the ones escaped, on purpose
const UNSAFE = /[%/:{}\s\x00-\x1f\x7f]/g;

/** Escapes an id for use inside a key or a composite member. */
export function esc(id: string): string {
  return id.replace(UNSAFE, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`);
}

/** Inverse of `esc`. */
export function unesc(part: string): string {
  return part.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** Splits a composite member (`u/d/cl/...`) into its raw ids. */
export function splitMember(member: string): string[] {
  return member.split('/').map(unesc);
}

export class RegistryKeys {
  readonly root: string;
  constructor(readonly prefix: string) {
    this.root = `${prefix}rt:`;
  }
  /** Pattern of every registry key (diagnostics). */
  all(): string {
    return `${escapeGlob(this.root)}*`;
  }
  appsIndex(): string {
    return `${this.root}apps`;
  }
  outbox(): string {
    return `${this.root}outbox`;
  }
  journal(): string {
    return `${this.root}journal`;
  }
  /** Base key of an application; every other key of it starts with this (hash tag `{a}`). */
  app(a: string): string {
    return `${this.root}app:{${esc(a)}}`;
  }
  /** Pattern matching the base key of every application (index reconciliation). */
  appBasePattern(): string {
    return `${escapeGlob(this.root)}app:\\{*\\}`;
  }
  appOf(baseKey: string): string | null {
    const m = /^.*?rt:app:\{([^}]*)\}$/.exec(baseKey);
    return m ? unesc(m[1]!) : null;
  }
  appClients(a: string) {
    return `${this.app(a)}:clients`;
  }
  appUsers(a: string) {
    return `${this.app(a)}:users`;
  }
  appDevices(a: string) {
    return `${this.app(a)}:devices`;
  }
  appChannels(a: string) {
    return `${this.app(a)}:channels`;
  }
  appConns(a: string) {
    return `${this.app(a)}:conns`;
  }
  user(a: string, u: string) {
    return `${this.app(a)}:u:${esc(u)}`;
  }
  userDevices(a: string, u: string) {
    return `${this.user(a, u)}:devices`;
  }
  userChannels(a: string, u: string) {
    return `${this.user(a, u)}:channels`;
  }
  device(a: string, u: string, d: string) {
    return `${this.app(a)}:d:${esc(u)}/${esc(d)}`;
  }
  deviceClients(a: string, u: string, d: string) {
    return `${this.device(a, u, d)}:clients`;
  }
  deviceChannels(a: string, u: string, d: string) {
    return `${this.device(a, u, d)}:channels`;
  }
  client(a: string, u: string, d: string, cl: string) {
    return `${this.app(a)}:c:${clientMember(u, d, cl)}`;
  }
  clientChannels(a: string, u: string, d: string, cl: string) {
    return `${this.client(a, u, d, cl)}:channels`;
  }
  channel(a: string, ch: string) {
    return `${this.app(a)}:ch:${esc(ch)}`;
  }
  channelPart(
    a: string,
    ch: string,
    part: 'clients' | 'users' | 'devices' | 'udev' | 'conns' | 'uconns' | 'dconns' | 'cfg',
  ) {
    return `${this.channel(a, ch)}:${part}`;
  }
  clientConnsInChannel(a: string, ch: string, u: string, d: string, cl: string) {
    return `${this.channel(a, ch)}:cconn:${clientMember(u, d, cl)}`;
  }
  userCfg(a: string, ch: string, u: string) {
    return `${this.channel(a, ch)}:ucfg:${esc(u)}`;
  }
  deviceCfg(a: string, ch: string, u: string, d: string) {
    return `${this.channel(a, ch)}:dcfg:${esc(u)}/${esc(d)}`;
  }
  clientCfg(a: string, ch: string, u: string, d: string, cl: string) {
    return `${this.channel(a, ch)}:ccfg:${clientMember(u, d, cl)}`;
  }
  connection(a: string, ch: string, u: string, d: string, cl: string, cn: string) {
    return `${this.app(a)}:cn:${esc(ch)}/${clientMember(u, d, cl)}/${esc(cn)}`;
  }
  connectionCfg(a: string, ch: string, u: string, d: string, cl: string, cn: string) {
    return `${this.connection(a, ch, u, d, cl, cn)}:cfg`;
  }
  /** Base key of the servers slot. */
  servers(): string {
    return `${this.root}srv:{servers}`;
  }
  serverRole(role: ServerRole) {
    return `${this.servers()}:${role}`;
  }
  serverSeen(role: ServerRole) {
    return `${this.servers()}:${role}:seen`;
  }
  mediaServerDisabled() {
    return `${this.servers()}:mediaserver:disabled`;
  }
  mediaServerLoad() {
    return `${this.servers()}:mediaserver:load`;
  }
  mediaServerStats(id: string) {
    return `${this.servers()}:mediaserver:stats:${esc(id)}`;
  }
  mediaServerApps(id: string) {
    return `${this.servers()}:mediaserver:apps:${esc(id)}`;
  }
  gatewayClients(gatewayId: string) {
    return `${this.servers()}:gateway:clients:${esc(gatewayId)}`;
  }
  sweeperLock() {
    return `${this.servers()}:sweeper`;
  }
}

export const SERVER_ROLES = ['mediaserver', 'connector', 'gateway', 'recording'] as const;
export type ServerRole = (typeof SERVER_ROLES)[number];

export function clientMember(u: string, d: string, cl: string): string {
  return `${esc(u)}/${esc(d)}/${esc(cl)}`;
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/** A client's member in its gateway's client set (`a/u/d/cl`, escaped). */
export function gatewayMember(a: string, c: ClientIds): string {
  return `${esc(a)}/${clientMember(c.userId, c.deviceId, c.clientId)}`;
}

/** The client a member of a gateway's client set names. */
export function parseGatewayMember(member: string): ClientRef {
  const [applicationId = '', userId = '', deviceId = '', clientId = ''] = splitMember(member);
  return { applicationId, userId, deviceId, clientId };
}
