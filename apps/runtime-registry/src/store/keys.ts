import type { ClientRef } from '@switchboard/contracts';
import type { ClientIds } from './store-types.js';
// The Redis key layout of the live model, and why it is so: the store section of the app's README.

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
  /** The channel's placed (sfu/mcu) connections: connection id -> client member (both escaped). */
  channelConnectionIds(a: string, ch: string) {
    return `${this.channel(a, ch)}:cnids`;
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
