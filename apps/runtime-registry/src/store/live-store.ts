import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DomainError, type ChannelClaim } from '@switchboard/contracts';
import { REDIS } from '@switchboard/service-kit';
import type { Redis } from 'ioredis';
import { asHash, asList } from '../model/records.js';
import type { LevelHash, LevelSnapshot } from '../model/settings.js';
import { clientMember, esc, KEY_PREFIX, RegistryKeys, splitMember, unesc } from './keys.js';
import { scriptDefinitions, SEQUENCE_SCRIPTS, type AppScript, type SequenceScript } from './scripts.js';

type Hash = Record<string, string>;

export interface ClientIds {
  userId: string;
  deviceId: string;
  clientId: string;
}
export interface ConnectionIds extends ClientIds {
  channelId: string;
  connectionId: string;
}

export interface IndexTransition {
  gen: string;
  state: 0 | 1;
  org: string;
}

/** A connection as it was when it left the live model. */
export interface ClosedConnection extends ConnectionIds {
  conn: Hash;
  levels: LevelSnapshot;
  final: string;
  at: number;
}

/** A client leaving a channel (kick, leave, unregister). */
export interface LeftChannel extends ClientIds {
  channelId: string;
  closed: ClosedConnection[];
  deactivated: boolean;
  at: number;
}

export interface RegisterResult {
  created: boolean;
  previousGatewayId: string | null;
  client: Hash;
  /** The registration of another session this one replaced: its client hash, and the channels it left. */
  replaced: { client: Hash; lefts: LeftChannel[] } | null;
  index: IndexTransition | null;
  /** When the change happened (the script's Redis clock, Unix ms): the timestamp of its events. */
  at: number;
}
export interface UnregisterResult {
  client: Hash;
  lefts: LeftChannel[];
  index: IndexTransition | null;
  organizationId: string;
  /** When the change happened (the script's Redis clock; its lefts carry the same): the timestamp of its events. */
  at: number;
}
export interface JoinResult {
  already: boolean;
  activated: boolean;
  client: Hash;
  counts: [number, number, number, number];
  levels: LevelSnapshot;
  organizationId: string;
  /** When the change happened (the script's Redis clock): the timestamp of its events. */
  at: number;
}
export interface RemoveResult {
  lefts: LeftChannel[];
  /** Client hashes of the removed members, by member (`u/d/cl` escaped). */
  clients: Map<string, Hash>;
  organizationId: string;
}
/** A connection patch that unmutes `unmute`; `seq`: the settings sequence its check read. */
export interface UnmuteGuard {
  unmute: Array<'audio' | 'video'>;
  seq?: string;
}
export interface ConnectionSnapshot {
  conn: Hash;
  client: Hash;
  levels: LevelSnapshot;
  organizationId: string;
}
export interface StateResult {
  same: boolean;
  old: string | null;
  /** Set when the state was terminal: the connection left the live model. */
  closed: ClosedConnection | null;
  snapshot: ConnectionSnapshot | null;
  client: Hash;
  organizationId: string;
  /** When the state changed (the script's Redis clock; `closed.at` for a terminal state); 0 when `same`. */
  at: number;
}
export interface LevelTarget extends ConnectionIds {
  conn: Hash;
  client: Hash;
  levels: LevelSnapshot;
}
export interface LevelUpdateResult {
  old: LevelHash;
  /** The application's settings sequence number of this write (orders settings pushes). */
  seq: number;
  targets: LevelTarget[];
  claimChanged: boolean;
  client: Hash | null;
  organizationId: string;
  /** When the write happened (the script's Redis clock): the timestamp of the events it causes. */
  at: number;
}

/** A registered client as `sessions` reads it. */
export interface SessionSnapshot {
  client: Hash;
  /** Its channels: the claim (JSON text; null if unreadable) and its connections with their settings levels. */
  channels: Array<{
    channelId: string;
    claim: string | null;
    connections: Array<{ connectionId: string; levels: LevelSnapshot }>;
  }>;
}

export type RemoveLevel = 'channel' | 'user' | 'device' | 'client';
export type UpdateLevel = 'channel' | 'user' | 'device' | 'client' | 'connection';

type ScriptCaller = (...keysAndArgs: Array<string | number>) => Promise<string>;

/**
 * One run of an app script, described (`LiveStore.*Call`) rather than run: `LiveStore.sequence`
 * runs several of one application in one round trip. `result` reads its answer as the method of
 * the same name does (throwing its DomainErrors).
 */
export interface ScriptCall<T> {
  script: AppScript;
  /** The application's base key, and the script's second key if it has one. */
  keys: [string] | [string, string];
  args: unknown;
  result(raw: unknown): T;
}

/**
 * An entry of the operation journal (events/journal.ts): a script run given one records, in the same
 * atomic run as its change, `context` (a JSON text) and its answer under `id`.
 */
export interface JournalEntry {
  id: string;
  context: string;
}

/** The outcome of one call of `LiveStore.sequence`. */
export type CallOutcome<T> = { ok: T } | { error: unknown };

interface Failure {
  fail?: string;
  detail?: string;
}

/**
 * The live model of the applications in Redis: every change is one Lua script (see scripts.ts),
 * reads are MULTI pipelines. Failures of a script (unknown client, channel, ...) become NotFound,
 * Conflict or Forbidden DomainErrors here.
 */
@Injectable()
export class LiveStore implements OnModuleInit {
  readonly keys: RegistryKeys;

  constructor(
    @Inject(REDIS) readonly redis: Redis,
    @Inject(KEY_PREFIX) prefix: string,
  ) {
    this.keys = new RegistryKeys(prefix);
  }

  onModuleInit() {
    for (const [name, def] of Object.entries(scriptDefinitions())) {
      if (!(name in this.redis)) this.redis.defineCommand(name, def);
    }
  }

  /** Runs a script against the slot of `key` (and the further keys it declares); returns its JSON answer. */
  async run<T>(script: string, key: string | readonly string[], args: unknown): Promise<T & Failure> {
    const fn = (this.redis as unknown as Record<string, ScriptCaller>)[script];
    if (!fn) throw new Error(`script ${script} is not defined`);
    const raw =
      typeof key === 'string'
        ? await fn.call(this.redis, key, JSON.stringify(args))
        : await fn.call(this.redis, ...key, JSON.stringify(args));
    return JSON.parse(raw) as T & Failure;
  }

  /**
   * Runs an app script: KEYS are its keys and the journal, ARGV its arguments as JSON and, with
   * `journal`, the entry's id and context (the run records the entry with its change, see
   * scripts.ts). Answers the script's JSON text.
   */
  private runApp(
    script: AppScript | 'rtSequence',
    keys: readonly string[],
    args: Record<string, unknown>,
    journal?: JournalEntry,
    variableKeys = false,
  ): Promise<string> {
    const fn = (this.redis as unknown as Record<string, ScriptCaller>)[script];
    if (!fn) throw new Error(`script ${script} is not defined`);
    const all = [...keys, this.keys.journal(), JSON.stringify(args)];
    if (journal) all.push(journal.id, journal.context);
    // A script with a variable number of keys (rtSequence) takes their number first.
    return variableKeys ? fn.call(this.redis, keys.length + 1, ...all) : fn.call(this.redis, ...all);
  }

  /** Runs one described script call (see `ScriptCall`); with `journal`, journaled with its change. */
  async call<T>(c: ScriptCall<T>, journal?: JournalEntry): Promise<T> {
    return c.result(JSON.parse(await this.runApp(c.script, c.keys, c.args as Record<string, unknown>, journal)));
  }

  /**
   * Runs script calls of ONE application (the same base key) one after the other as one script
   * (`rtSequence`): each applied exactly as on its own, and all of them atomically. The first that
   * fails ends it: answers the outcomes of the calls that ran (the failing one last); the calls
   * after it were not applied.
   */
  async sequence(
    calls: ReadonlyArray<ScriptCall<unknown>>,
    journal?: JournalEntry,
  ): Promise<Array<CallOutcome<unknown>>> {
    if (calls.length === 0) return [];
    const keys: string[] = [calls[0]!.keys[0]];
    const ops = calls.map((c) => {
      if (c.keys[0] !== keys[0]) throw new Error('a script sequence runs against one application');
      if (!(SEQUENCE_SCRIPTS as readonly string[]).includes(c.script))
        throw new Error(`${c.script} does not run in a sequence`);
      const second = c.keys[1];
      let k = second === undefined ? 0 : keys.indexOf(second);
      if (k < 0) k = keys.push(second!) - 1;
      return { s: c.script as SequenceScript, p: c.args, k: k + 1 };
    });
    return this.sequenceOutcomes(calls, await this.runApp('rtSequence', keys, { ops }, journal, true));
  }

  /** The outcomes of a `sequence` from its script's answer (also read from a journal entry). */
  sequenceOutcomes(calls: ReadonlyArray<ScriptCall<unknown>>, answer: string): Array<CallOutcome<unknown>> {
    const raw = asList<unknown>(JSON.parse(answer));
    const out: Array<CallOutcome<unknown>> = [];
    let client: unknown;
    for (let i = 0; i < raw.length && i < calls.length; i++) {
      // `client: 1`: the client hash of the answer before (see rtSequence).
      const r = raw[i] as { client?: unknown };
      if (r && typeof r === 'object' && r.client !== undefined) {
        if (r.client === 1) r.client = client;
        else client = r.client;
      }
      try {
        out.push({ ok: calls[i]!.result(r) });
      } catch (error) {
        out.push({ error });
        break;
      }
    }
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // Writes
  // -------------------------------------------------------------------------------------------

  /** Registers a client (run it with `call`, or in a `sequence`). */
  registerCall(
    a: string,
    c: ClientIds & {
      userAlias: string | null;
      deviceAlias: string | null;
      tag: string | null;
      roles: string[];
      protocol: string;
    },
    organizationId: string,
    gatewayId: string,
    claims: ChannelClaim[],
    sessionId?: string,
  ): ScriptCall<RegisterResult> {
    return {
      script: 'rtRegister',
      keys: [this.keys.app(a), this.keys.gatewayClients(gatewayId)],
      args: {
        ...ids(c),
        app: a,
        org: organizationId,
        gw: gatewayId,
        gwMember: this.gatewayMember(a, c),
        userAlias: c.userAlias,
        deviceAlias: c.deviceAlias,
        tag: c.tag,
        roles: JSON.stringify(c.roles),
        protocol: c.protocol,
        claims: JSON.stringify(claims),
        sessionId,
      },
      result: (raw) => {
        const r = raw as {
          new: boolean;
          prevGatewayId: string | false;
          client: unknown;
          replaced: false | { client: unknown; lefts: unknown };
          index?: IndexTransition;
          at: string;
        };
        return {
          created: r.new,
          previousGatewayId: r.prevGatewayId || null,
          client: asHash(r.client),
          replaced: r.replaced
            ? { client: asHash(r.replaced.client), lefts: asList<RawLeft>(r.replaced.lefts).map(left) }
            : null,
          index: r.index ?? null,
          at: Number(r.at),
        };
      },
    };
  }

  /**
   * Unregisters a client; `onlyIfGateway` / `onlyIfSession`: only while that gateway (and that
   * registration of it) still holds it. Null when it was not registered (or is held by another).
   * The counts of its connections on their media servers are freed in the same step.
   */
  unregisterCall(
    a: string,
    c: ClientIds,
    idleTtlMs: number,
    onlyIfGateway?: string,
    onlyIfSession?: string,
  ): ScriptCall<UnregisterResult | null> {
    return {
      script: 'rtUnregister',
      keys: [this.keys.app(a), this.keys.servers()],
      args: { ...ids(c), app: a, gw: onlyIfGateway, session: onlyIfSession, idleTtlMs },
      result: (raw) => {
        const r = raw as Failure & {
          client: unknown;
          lefts: unknown;
          index?: IndexTransition;
          org: string;
          at: string;
        };
        if (r.fail) return null;
        return {
          client: asHash(r.client),
          lefts: asList<RawLeft>(r.lefts).map(left),
          index: r.index ?? null,
          organizationId: r.org,
          at: Number(r.at),
        };
      },
    };
  }

  /** Joins a channel; `recordingEnabled`: the channel config's default, kept when this join activates the channel. */
  joinCall(
    a: string,
    c: ClientIds,
    channelId: string,
    claim: ChannelClaim,
    recordingEnabled: boolean | null = null,
  ): ScriptCall<JoinResult> {
    return {
      script: 'rtJoin',
      keys: [this.keys.app(a)],
      args: {
        ...ids(c),
        ch: esc(channelId),
        claim: JSON.stringify(claim),
        rec: recordingEnabled === null ? undefined : recordingEnabled ? '1' : '0',
      },
      result: (raw) => {
        const r = raw as Failure & {
          already: boolean;
          activated: boolean;
          client: unknown;
          counts: number[];
          levels: RawLevels;
          org: string;
          at: string;
        };
        if (r.fail) throw notFound('client', c);
        const counts = asList<number>(r.counts);
        return {
          already: r.already,
          activated: r.activated,
          client: asHash(r.client),
          counts: [counts[0] ?? 0, counts[1] ?? 0, counts[2] ?? 0, counts[3] ?? 0],
          levels: levelSnapshot(r.levels),
          organizationId: r.org,
          at: Number(r.at),
        };
      },
    };
  }

  /**
   * Removes members of a channel (kicks, a leave); the counts of their connections on their media servers are freed in
   * the same step.
   */
  /** `session` (level client): only while that registration of the client holds it (else NotFound). */
  removeMembersCall(
    a: string,
    channelId: string,
    level: RemoveLevel,
    who: Partial<ClientIds>,
    session?: string,
  ): ScriptCall<RemoveResult> {
    return {
      script: 'rtRemoveMembers',
      keys: [this.keys.app(a), this.keys.servers()],
      args: { app: a, ch: esc(channelId), level, ...partialIds(who), session },
      result: (raw) => {
        const r = raw as Failure & { lefts: unknown; clients: unknown; org: string };
        if (r.fail) throw notFoundInChannel(r.fail, channelId, who);
        const clients = new Map<string, Hash>();
        for (const [member, hash] of Object.entries(asHash(r.clients) as unknown as Record<string, unknown>))
          clients.set(member, asHash(hash));
        return { lefts: asList<RawLeft>(r.lefts).map(left), clients, organizationId: r.org };
      },
    };
  }

  /**
   * Opens a connection; `placement` (sfu/mcu): placed on the least-loaded eligible media server in
   * the same step (its id in the snapshot's `conn.mediaServerId`), Unavailable when there is none.
   */
  openCall(
    a: string,
    ref: ConnectionIds,
    type: string,
    fields: Record<string, string>,
    claimFlag: string | null,
    placement: { timeoutMs: number } | null = null,
  ): ScriptCall<ConnectionSnapshot> {
    return {
      script: 'rtOpen',
      keys: [this.keys.app(a), this.keys.servers()],
      args: {
        ...connIds(ref),
        type,
        fields,
        claimFlag: claimFlag ?? undefined,
        place: placement !== null,
        timeoutMs: placement?.timeoutMs,
        app: a,
      },
      result: (raw) => {
        const r = raw as RawSnapshot & Failure;
        if (r.fail === 'unavailable')
          throw new DomainError('Unavailable', `No media server is available for a new ${type} connection.`);
        if (r.fail === 'client') throw notFound('client', ref);
        if (r.fail === 'membership')
          throw new DomainError('NotFound', `Client '${ref.clientId}' has not joined channel '${ref.channelId}'.`);
        if (r.fail === 'claim')
          throw new DomainError(
            'Forbidden',
            `The channel claim of client '${ref.clientId}' does not allow ${type} connections (${r.detail}).`,
          );
        if (r.fail === 'exists') throw new DomainError('Conflict', `Connection '${ref.connectionId}' already exists.`);
        return snapshot(r);
      },
    };
  }

  /**
   * Moves a connection to a state; its count on its media server (if any) moves along in the same
   * step. `session`: only while that registration of the client holds it (else NotFound).
   */
  connStateCall(
    a: string,
    ref: ConnectionIds,
    state: string,
    from: readonly string[],
    terminal: boolean,
    error: string | null,
    session?: string,
  ): ScriptCall<StateResult> {
    return {
      script: 'rtConnState',
      keys: [this.keys.app(a), this.keys.servers()],
      args: {
        ...connIds(ref),
        app: a,
        state,
        from,
        terminal,
        error: error ?? undefined,
        session,
      },
      result: (raw) => {
        const r = raw as RawSnapshot &
          Failure & { same?: boolean; old?: string; closed?: RawClosed | false; at?: string };
        if (r.fail === 'connection') throw notFoundConnection(ref);
        if (r.fail === 'transition')
          throw new DomainError('Conflict', `Connection '${ref.connectionId}' cannot go from ${r.detail} to ${state}.`);
        if (r.same)
          return { same: true, old: state, closed: null, snapshot: null, client: {}, organizationId: '', at: 0 };
        const closed = r.closed ? closedConnection(r.closed) : null;
        return {
          same: false,
          old: r.old ?? null,
          closed,
          snapshot: closed ? null : snapshot(r),
          client: asHash(r.client),
          organizationId: r.org,
          at: closed ? closed.at : Number(r.at),
        };
      },
    };
  }

  /**
   * Writes fields of a connection record. `guard`: the patch unmutes these kinds; while a level could
   * disable that, nothing is written and the answer carries `check` (the settings sequence read) for
   * the caller to decide, then patch again with `seq` set to it (see CONN_PATCH in scripts.ts).
   */
  async connPatch(
    a: string,
    ref: ConnectionIds,
    set: Record<string, string>,
    del: string[],
    guard?: UnmuteGuard,
  ): Promise<ConnectionSnapshot & { check?: string }> {
    const r = JSON.parse(
      await this.runApp('rtConnPatch', [this.keys.app(a)], { ...connIds(ref), set, del, ...guard }),
    ) as RawSnapshot & Failure & { check?: string };
    if (r.fail) throw notFoundConnection(ref);
    return r.check === undefined ? snapshot(r) : { ...snapshot(r), check: r.check };
  }

  async clientPatch(
    a: string,
    c: ClientIds,
    set: Record<string, string>,
    del: string[],
  ): Promise<{ client: Hash; channels: string[]; organizationId: string }> {
    const r = JSON.parse(await this.runApp('rtClientPatch', [this.keys.app(a)], { ...ids(c), set, del })) as Failure & {
      client: unknown;
      channels: unknown;
      org: string;
    };
    if (r.fail) throw notFound('client', c);
    return { client: asHash(r.client), channels: asList<string>(r.channels).map(unesc), organizationId: r.org };
  }

  levelUpdateCall(
    a: string,
    level: UpdateLevel,
    ref: { channelId: string } & Partial<ClientIds> & { connectionId?: string },
    set: Record<string, string>,
    lists: Record<string, string>,
    claim: ChannelClaim | null,
  ): ScriptCall<LevelUpdateResult> {
    return {
      script: 'rtLevelUpdate',
      keys: [this.keys.app(a)],
      args: {
        level,
        ch: esc(ref.channelId),
        ...partialIds(ref),
        cn: ref.connectionId === undefined ? undefined : esc(ref.connectionId),
        set,
        lists,
        claim: claim ? JSON.stringify(claim) : undefined,
      },
      result: (raw) => {
        const r = raw as Failure & {
          old: unknown;
          seq: number;
          targets: unknown;
          claim: boolean;
          client: unknown;
          org: string;
          at: string;
        };
        if (r.fail) {
          if (r.fail === 'connection') throw notFoundConnection(ref as ConnectionIds);
          throw notFoundInChannel(r.fail, ref.channelId, ref);
        }
        const targets = asList<RawTarget>(r.targets).map((t) => ({
          channelId: ref.channelId,
          ...rawIds(t),
          connectionId: unesc(t.cn),
          conn: asHash(t.conn),
          client: asHash(t.client),
          levels: levelSnapshot(t.levels),
        }));
        return {
          old: asHash(r.old),
          seq: Number(r.seq),
          targets,
          claimChanged: r.claim,
          client: r.client ? asHash(r.client) : null,
          organizationId: r.org,
          at: Number(r.at),
        };
      },
    };
  }

  /** Applies an in-use transition to the applications index (ordered by generation). */
  async indexApply(a: string, t: IndexTransition): Promise<void> {
    await this.run('rtIndexApply', this.keys.appsIndex(), { a, gen: t.gen, state: t.state, org: t.org });
  }

  // -------------------------------------------------------------------------------------------
  // Reads
  // -------------------------------------------------------------------------------------------

  /** Runs read commands in one MULTI (a consistent snapshot). */
  async read(commands: Array<[string, ...Array<string | number>]>): Promise<unknown[]> {
    if (commands.length === 0) return [];
    const results = (await this.redis.multi(commands as unknown as string[][]).exec()) ?? [];
    return results.map(([err, value]) => {
      if (err) throw err;
      return value;
    });
  }

  /**
   * What the registry holds for these clients of application `a`, in one atomic read (rtSessions):
   * one per client, null when not registered; and the application's settings sequence number.
   */
  async sessions(a: string, clients: ClientIds[]): Promise<{ clients: Array<SessionSnapshot | null>; seq: number }> {
    const r = JSON.parse(
      await this.runApp('rtSessions', [this.keys.app(a)], {
        cls: clients.map((c) => clientMember(c.userId, c.deviceId, c.clientId)),
      }),
    ) as {
      clients: unknown;
      seq: string;
    };
    type RawSession = { client: unknown; channels: unknown } | false;
    type RawChannel = { ch: string; claim: string | false; conns: unknown };
    return {
      seq: Number(r.seq) || 0,
      clients: asList<RawSession>(r.clients).map((x) =>
        x
          ? {
              client: asHash(x.client),
              channels: asList<RawChannel>(x.channels).map((ch) => ({
                channelId: unesc(ch.ch),
                claim: ch.claim || null,
                connections: asList<{ cn: string; levels: RawLevels }>(ch.conns).map((n) => ({
                  connectionId: unesc(n.cn),
                  levels: levelSnapshot(n.levels),
                })),
              })),
            }
          : null,
      ),
    };
  }

  /** Owner, in-use flag and counts of an application, in one atomic read. */
  async appSnapshot(a: string): Promise<{ organizationId: string | null; inUse: boolean; counts: number[] }> {
    const r = JSON.parse(await this.runApp('rtAppSnapshot', [this.keys.app(a)], {})) as {
      org: string | false;
      inUse: boolean;
      counts: number[];
    };
    return { organizationId: r.org || null, inUse: r.inUse, counts: asList<number>(r.counts) };
  }

  /** The owner and in-use flag of an application. */
  async appOwner(a: string): Promise<{ organizationId: string | null; inUse: boolean }> {
    const [org, inUse] = await this.redis.hmget(this.keys.app(a), 'organizationId', 'inUse');
    return { organizationId: org ?? null, inUse: inUse === '1' };
  }

  async appsIndex(): Promise<Map<string, { gen: number; inUse: boolean; organizationId: string }>> {
    const all = await this.redis.hgetall(this.keys.appsIndex());
    const out = new Map<string, { gen: number; inUse: boolean; organizationId: string }>();
    for (const [a, v] of Object.entries(all)) {
      const m = /^(\d+):([01]):(.*)$/.exec(v);
      if (m) out.set(a, { gen: Number(m[1]), inUse: m[2] === '1', organizationId: m[3]! });
    }
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // Gateway -> clients index (the slot of the servers; the register script adds, unregister removes after)
  // -------------------------------------------------------------------------------------------

  gatewayMember(a: string, c: ClientIds): string {
    return `${esc(a)}/${clientMember(c.userId, c.deviceId, c.clientId)}`;
  }

  parseGatewayMember(member: string): { applicationId: string } & ClientIds {
    const [applicationId = '', userId = '', deviceId = '', clientId = ''] = splitMember(member);
    return { applicationId, userId, deviceId, clientId };
  }

  /**
   * After a register (which added the client to its gateway's set): leaves the set of the gateway that held it before.
   */
  async untrackPreviousGateway(a: string, c: ClientIds, gatewayId: string, previous: string | null): Promise<void> {
    if (previous && previous !== gatewayId)
      await this.redis.srem(this.keys.gatewayClients(previous), this.gatewayMember(a, c));
  }

  async untrackGateway(a: string, c: ClientIds, gatewayId: string | null): Promise<void> {
    if (gatewayId) await this.redis.srem(this.keys.gatewayClients(gatewayId), this.gatewayMember(a, c));
  }
}

// ---------------------------------------------------------------------------------------------
// Raw script answers -> typed results
// ---------------------------------------------------------------------------------------------

interface RawLevels {
  ch: unknown;
  u: unknown;
  d: unknown;
  c: unknown;
  n: unknown;
}
interface RawClosed {
  ch: string;
  u: string;
  d: string;
  cl: string;
  cn: string;
  conn: unknown;
  levels: RawLevels;
  final: string;
  at: string;
}
interface RawLeft {
  ch: string;
  u: string;
  d: string;
  cl: string;
  closed: unknown;
  deactivated: boolean;
  at: string;
}
interface RawSnapshot {
  conn: unknown;
  client: unknown;
  levels: RawLevels;
  org: string;
}
interface RawTarget {
  u: string;
  d: string;
  cl: string;
  cn: string;
  conn: unknown;
  client: unknown;
  levels: RawLevels;
}

function ids(c: ClientIds) {
  return { u: esc(c.userId), d: esc(c.deviceId), cl: esc(c.clientId) };
}
function partialIds(c: Partial<ClientIds>) {
  return {
    u: c.userId === undefined ? undefined : esc(c.userId),
    d: c.deviceId === undefined ? undefined : esc(c.deviceId),
    cl: c.clientId === undefined ? undefined : esc(c.clientId),
  };
}
function connIds(ref: ConnectionIds) {
  return { ...ids(ref), ch: esc(ref.channelId), cn: esc(ref.connectionId) };
}
function rawIds(r: { u: string; d: string; cl: string }): ClientIds {
  const [userId = '', deviceId = '', clientId = ''] = splitMember(`${r.u}/${r.d}/${r.cl}`);
  return { userId, deviceId, clientId };
}

export function levelSnapshot(raw: RawLevels | undefined): LevelSnapshot {
  return { ch: asHash(raw?.ch), u: asHash(raw?.u), d: asHash(raw?.d), c: asHash(raw?.c), n: asHash(raw?.n) };
}

function snapshot(r: RawSnapshot): ConnectionSnapshot {
  return { conn: asHash(r.conn), client: asHash(r.client), levels: levelSnapshot(r.levels), organizationId: r.org };
}

function closedConnection(r: RawClosed): ClosedConnection {
  return {
    ...rawIds(r),
    channelId: unesc(r.ch),
    connectionId: unesc(r.cn),
    conn: asHash(r.conn),
    levels: levelSnapshot(r.levels),
    final: r.final,
    at: Number(r.at),
  };
}

function left(r: RawLeft): LeftChannel {
  return {
    ...rawIds(r),
    channelId: unesc(r.ch),
    closed: asList<RawClosed>(r.closed).map(closedConnection),
    deactivated: r.deactivated,
    at: Number(r.at),
  };
}

function notFound(what: 'client', c: Partial<ClientIds>): DomainError {
  return new DomainError(
    'NotFound',
    `No ${what} '${c.clientId}' of user '${c.userId}', device '${c.deviceId}' is registered.`,
  );
}

function notFoundConnection(ref: ConnectionIds): DomainError {
  return new DomainError(
    'NotFound',
    `No connection '${ref.connectionId}' of client '${ref.clientId}' in channel '${ref.channelId}'.`,
  );
}

function notFoundInChannel(what: string, channelId: string, who: Partial<ClientIds>): DomainError {
  switch (what) {
    case 'channel':
      return new DomainError('NotFound', `Channel '${channelId}' is not active.`);
    case 'user':
      return new DomainError('NotFound', `User '${who.userId}' is not in channel '${channelId}'.`);
    case 'device':
      return new DomainError(
        'NotFound',
        `Device '${who.deviceId}' of user '${who.userId}' is not in channel '${channelId}'.`,
      );
    default:
      return new DomainError('NotFound', `Client '${who.clientId}' is not in channel '${channelId}'.`);
  }
}
