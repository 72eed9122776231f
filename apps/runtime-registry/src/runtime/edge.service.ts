import { Injectable } from '@nestjs/common';
import {
  DomainError,
  type ChannelClaim,
  type ConnectionState,
  type DomainEvent,
  type EdgeReport,
  type EdgeGatewayClientsRead,
  type EdgeGatewayClientsResult,
  type EdgeResults,
  type EdgeSessionsRead,
  type EdgeSessionsResult,
  type EdgeSessionState,
  type MessageBody,
} from '@switchboard/contracts';
import type { Delivery } from '../events/pusher.js';
import { domainEvent, connectionStateEvent, messagePart, type EventCause, type EventOwner } from '../model/events.js';
import { clientRecord, connectionFields, mediaStats, parseJson, type ClientRecord } from '../model/records.js';
import { effectiveSettings, publicSettings } from '../model/settings.js';
import { clientMessageTarget } from '../model/targets.js';
import { checkUnmute, unmutedKinds } from '../model/unmute.js';
import { clientMember } from '../store/keys.js';
import type {
  CallOutcome,
  ClientIds,
  ConnectionIds,
  ConnectionSnapshot,
  JoinResult,
  JournalEntry,
  RegisterResult,
  RemoveResult,
  ScriptCall,
  SessionSnapshot,
  StateResult,
  UnregisterResult,
} from '../store/live-store.js';
import { ChannelRecordingDefaults } from './channel-recording.js';
import { CLIENT_CAUSE, RuntimeContext, SERVER_CAUSE } from './context.js';
import type { JournalContext } from './journaled.js';
import { Recipients } from './recipients.js';

type Report<K extends EdgeReport['kind']> = Extract<EdgeReport, { kind: K }>;

/** The events and pushes a change causes. */
export interface Effects {
  events: DomainEvent[];
  deliveries: Delivery[];
}

/** What a report leaves to do once its script ran: its answer, and the events and pushes it causes. */
interface Done extends Effects {
  answer: unknown;
}

/** A report as its script call and what follows the script (see `EdgeService.together`). */
interface Step<T> {
  call: ScriptCall<T>;
  finish(result: T): Promise<Done>;
}

/** The reports `EdgeService.together` applies as one script run (each exactly as on its own). */
const TOGETHER: ReadonlySet<EdgeReport['kind']> = new Set([
  'client.register',
  'client.join',
  'connection.open',
  'connection.state',
]);

/**
 * The connection state machine the client edge enforces (mirrors `CONNECTION_TRANSITIONS` of the
 * edge contract): for each state, the states a connection may come from.
 */
const ALLOWED_FROM: Record<ConnectionState, readonly ConnectionState[]> = {
  new: [],
  initializing: ['new'],
  connecting: ['initializing'],
  connected: ['connecting'],
  failing: ['new', 'initializing', 'connecting', 'connected'],
  failed: ['failing'],
  closing: ['new', 'initializing', 'connecting', 'connected', 'failing'],
  closed: ['closing'],
};
export const LIVE_STATES: readonly ConnectionState[] = [
  'new',
  'initializing',
  'connecting',
  'connected',
  'failing',
  'closing',
];
/** Settings writes an unmute's check may see come in between before it gives up (Unavailable). */
const MAX_UNMUTE_CHECKS = 5;
const CLAIM_FLAG = { sfu: 'disableSfu', mcu: 'disableMcu', peer: 'disablePeer' } as const;

/**
 * What the client edge reports (`runtime-registry.v1.edge`): registrations, channel membership,
 * connection lifecycles, stats and client messages. Each report is one atomic script; then the
 * events are published (awaited) and pushes sent.
 */
@Injectable()
export class EdgeService {
  constructor(
    private readonly ctx: RuntimeContext,
    private readonly recipients: Recipients,
    private readonly recordingDefaults: ChannelRecordingDefaults,
  ) {}

  async handle(report: EdgeReport): Promise<EdgeResults[EdgeReport['kind']]> {
    switch (report.kind) {
      case 'client.register':
        return this.register(report);
      case 'client.unregister':
        return this.unregister(report);
      case 'client.join':
        return this.join(report);
      case 'client.leave':
        return this.leave(report);
      case 'client.update':
        return this.update(report);
      case 'client.message':
        return this.message(report);
      case 'client.stats':
        return this.clientStats(report);
      case 'connection.open':
        return this.open(report);
      case 'connection.state':
        return this.state(report);
      case 'connection.update':
        return this.connectionUpdate(report);
      case 'connection.stats':
        return this.connectionStats(report);
      case 'connection.close':
        return this.close(report);
    }
  }

  private get store() {
    return this.ctx.store;
  }

  async register(r: Report<'client.register'>): Promise<EdgeResults['client.register']> {
    return (await this.single(this.registerStep(r), r)) as EdgeResults['client.register'];
  }

  private registerStep(r: Report<'client.register'>): Step<RegisterResult> {
    const a = r.client.applicationId;
    return {
      call: this.store.registerCall(a, r.client, r.organizationId, r.gatewayId, r.claims, r.sessionId),
      finish: async (result) => {
        // Independent keys (applications index, the previous gateway's client set), both rarely needed.
        if (result.index || result.previousGatewayId)
          await Promise.all([
            this.ctx.index(a, result.index),
            this.store.untrackPreviousGateway(a, r.client, r.gatewayId, result.previousGatewayId),
          ]);
        const owner = { applicationId: a, organizationId: r.organizationId };
        const events: DomainEvent[] = [];
        if (result.replaced) {
          // The registration of the client's previous session ended with this one (see rtRegister).
          const previous = this.ctx.client(r.client, result.replaced.client);
          for (const left of result.replaced.lefts) this.ctx.leftChannel(owner, left, previous, SERVER_CAUSE, events);
          events.push(domainEvent(owner, 'client.unregistered', SERVER_CAUSE, { client: previous }, result.at));
        }
        if (result.created || result.replaced)
          events.push(
            domainEvent(
              owner,
              'client.registered',
              CLIENT_CAUSE,
              { client: this.ctx.client(r.client, result.client) },
              result.at,
            ),
          );
        // Registered again through another gateway replica: the session held by the old one ends.
        const moved: Delivery[] =
          result.previousGatewayId && result.previousGatewayId !== r.gatewayId
            ? [
                {
                  gatewayId: result.previousGatewayId,
                  client: {
                    applicationId: a,
                    userId: r.client.userId,
                    deviceId: r.client.deviceId,
                    clientId: r.client.clientId,
                  },
                  push: { type: 'unregistered', reason: 'The client registered again through another gateway.' },
                },
              ]
            : [];
        return { answer: { ok: true }, events, deliveries: moved };
      },
    };
  }

  /**
   * Runs one report's script, then publishes its events and sends its pushes: its answer. `report`:
   * the change is journaled (see OperationJournal), for a report that may cause events.
   */
  private async single<T>(step: Step<T>, report?: EdgeReport): Promise<unknown> {
    const entry = report && this.journal({ k: 'edge', reports: [forJournal(report)], seq: false });
    const done = await step.finish(await this.store.call(step.call, entry));
    if (entry) await this.ctx.settle(entry, done.deliveries, done.events);
    else await this.ctx.deliver(done.deliveries, done.events);
    return done.answer;
  }

  private journal(context: JournalContext): JournalEntry {
    return this.ctx.journal.open(context);
  }

  /** Whether `next` can be applied in one script run with `first` (see `together`). */
  static together(first: EdgeReport, next: EdgeReport): boolean {
    return (
      TOGETHER.has(first.kind) &&
      TOGETHER.has(next.kind) &&
      (first as Report<'client.join'>).client.applicationId === (next as Report<'client.join'>).client.applicationId
    );
  }

  /**
   * Reports of one application, in order (register, join, connection.open, connection.state: what
   * a client reports on connecting), applied as ONE script run: each checked and applied exactly
   * as on its own, and all of them atomically; their events then go out together, in order, and
   * their pushes. Answers one outcome per report that ran: the first refused one is the last (the
   * reports after it were not applied). When the events cannot be published (parked for the relay,
   * see EventPublisher) every report from the first one with events on answers that error (applied,
   * its events late), as each would on its own.
   */
  async together(reports: EdgeReport[]): Promise<Array<CallOutcome<unknown>>> {
    const steps: Array<Step<unknown>> = [];
    let prepError: { error: unknown } | undefined;
    for (const r of reports) {
      try {
        steps.push((await this.stepOf(r)) as Step<unknown>);
      } catch (error) {
        prepError = { error };
        break;
      }
    }
    const entry = this.journal({ k: 'edge', reports: reports.slice(0, steps.length).map(forJournal), seq: true });
    const ran = await this.store.sequence(
      steps.map((s) => s.call),
      entry,
    );
    const { out, events, deliveries, firstWithEvents } = await this.finishAll(steps, ran);
    try {
      await this.ctx.settle(entry, deliveries, events);
    } catch (error) {
      for (let i = Math.max(0, firstWithEvents); i < out.length; i++)
        if ('ok' in out[i]!) out[i] = { error } as CallOutcome<unknown>;
      return out;
    }
    if (prepError && ran.length === steps.length && !out.some((o) => 'error' in o)) out.push(prepError);
    return out;
  }

  /** What follows the script runs of `together`: each report's answer, and the events and pushes of them all. */
  private async finishAll(steps: Array<Step<unknown>>, ran: Array<CallOutcome<unknown>>) {
    const out: Array<CallOutcome<unknown>> = [];
    const events: DomainEvent[] = [];
    const deliveries: Delivery[] = [];
    let firstWithEvents = -1;
    for (let i = 0; i < ran.length; i++) {
      const o = ran[i]!;
      if (!('ok' in o)) {
        out.push(o);
        break;
      }
      try {
        const done = await steps[i]!.finish(o.ok);
        if (firstWithEvents < 0 && done.events.length) firstWithEvents = i;
        events.push(...done.events);
        deliveries.push(...done.deliveries);
        out.push({ ok: done.answer });
      } catch (error) {
        // Applied, with the ones after it: they answer this error too (as publishing does).
        while (out.length < ran.length) out.push({ error });
        break;
      }
    }
    return { out, events, deliveries, firstWithEvents };
  }

  /**
   * The events of a journaled change of the client edge, from its context and its script's answer
   * (see OperationJournal): exactly those its replica built.
   */
  async recover(
    context: Extract<JournalContext, { k: 'edge' | 'leave' | 'close' | 'unregister' }>,
    answer: string,
  ): Promise<DomainEvent[]> {
    switch (context.k) {
      case 'edge': {
        const steps: Array<Step<unknown>> = [];
        for (const r of context.reports) steps.push(await this.stepOf(r, true));
        if (context.seq)
          return (
            await this.finishAll(
              steps,
              this.store.sequenceOutcomes(
                steps.map((s) => s.call),
                answer,
              ),
            )
          ).events;
        const step = steps[0]!;
        return (await step.finish(step.call.result(JSON.parse(answer)))).events;
      }
      case 'leave': {
        const r = context.report;
        return this.leftEvents(r.client.applicationId, this.leaveCall(r).result(JSON.parse(answer)));
      }
      case 'close': {
        const r = context.report;
        return this.stateEvents(r.client.applicationId, connRef(r), 'closed', CLIENT_CAUSE, answer);
      }
      case 'unregister': {
        const result = this.store.unregisterCall(context.a, context.c, 0).result(JSON.parse(answer));
        return result ? this.unregistered(context.a, context.c, context.cause, result) : [];
      }
    }
  }

  /** The events of a journaled state change, from its script's answer (see `recover`). */
  stateEvents(a: string, ref: ConnectionIds, state: ConnectionState, cause: EventCause, answer: string): DomainEvent[] {
    return this.movedState(a, ref, state, this.stateCall(a, ref, state, [], null).result(JSON.parse(answer)), cause);
  }

  /** A report's step; `recovering`: only to read a journaled answer (see `recover`), its call does not run. */
  private async stepOf(r: EdgeReport, recovering = false): Promise<Step<unknown>> {
    switch (r.kind) {
      case 'client.register':
        return this.registerStep(r) as Step<unknown>;
      case 'client.join':
        return (await this.joinStep(r, recovering)) as Step<unknown>;
      case 'connection.open':
        return this.openStep(r) as Step<unknown>;
      case 'connection.state':
        return this.stateStep(r) as Step<unknown>;
      default:
        throw new Error(`${r.kind} is not applied together with other reports`);
    }
  }

  async unregister(r: Report<'client.unregister'>): Promise<EdgeResults['client.unregister']> {
    const cause: EventCause = r.reason === 'left' ? CLIENT_CAUSE : SERVER_CAUSE;
    // A stale unregister (the client registered again elsewhere meanwhile) changes nothing.
    await this.unregisterClient(r.client.applicationId, r.client, cause, r.gatewayId, r.sessionId);
    return { ok: true };
  }

  /**
   * Unregisters a client (also used for the clients of a gateway that is gone); false when it was
   * not registered, or no longer through `onlyIfGateway` (and `onlyIfSession`). Every event of it
   * (connections closed, channels left and deactivated, the client unregistered) carries the time of
   * the script that applied it.
   */
  async unregisterClient(
    a: string,
    c: ClientIds,
    cause: EventCause,
    onlyIfGateway?: string,
    onlyIfSession?: string,
  ): Promise<boolean> {
    const ids = { userId: c.userId, deviceId: c.deviceId, clientId: c.clientId };
    const entry = this.journal({ k: 'unregister', a, c: ids, cause, gw: onlyIfGateway, session: onlyIfSession });
    const result = await this.store.call(
      this.store.unregisterCall(a, ids, this.ctx.config.applicationIdleTtlSeconds * 1000, onlyIfGateway, onlyIfSession),
      entry,
    );
    if (!result) return false;
    await this.ctx.settle(entry, [], await this.unregistered(a, ids, cause, result));
    return true;
  }

  /** What follows an unregister's script: the bookkeeping outside the application's keys, and its events. */
  private async unregistered(
    a: string,
    c: ClientIds,
    cause: EventCause,
    result: UnregisterResult,
  ): Promise<DomainEvent[]> {
    await this.ctx.index(a, result.index);
    const client = this.ctx.client(c, result.client);
    await this.store.untrackGateway(a, c, client.gatewayId);
    const owner = { applicationId: a, organizationId: result.organizationId };
    const events: DomainEvent[] = [];
    for (const left of result.lefts) this.ctx.leftChannel(owner, left, client, cause, events);
    events.push(domainEvent(owner, 'client.unregistered', cause, { client }, result.at));
    return events;
  }

  async join(r: Report<'client.join'>): Promise<EdgeResults['client.join']> {
    return (await this.single(await this.joinStep(r), r)) as EdgeResults['client.join'];
  }

  private async joinStep(r: Report<'client.join'>, recovering = false): Promise<Step<JoinResult>> {
    const a = r.client.applicationId;
    // Cached per channel: a request to management-api only for a channel this replica has not seen
    // lately (it matters when this join activates the channel; the script ignores it otherwise).
    const recordingEnabled = recovering ? null : await this.recordingDefaults.recordingEnabled(a, r.channelId);
    return {
      call: this.store.joinCall(a, r.client, r.channelId, r.claim, recordingEnabled),
      finish: async (result) => {
        const owner = { applicationId: a, organizationId: result.organizationId };
        const client = this.ctx.client(r.client, result.client);
        const events: DomainEvent[] = [];
        // One moment: both events carry the time of the script that applied the join.
        if (result.activated)
          events.push(
            domainEvent(owner, 'channel.activated', CLIENT_CAUSE, { channelId: r.channelId, client }, result.at),
          );
        if (!result.already)
          events.push(
            domainEvent(owner, 'channel.client.joined', CLIENT_CAUSE, { channelId: r.channelId, client }, result.at),
          );
        const [userCount, deviceCount, clientCount, connectionCount] = result.counts;
        const settings = effectiveSettings(result.levels, { ...r.client, connectionId: null });
        const answer: EdgeResults['client.join'] = {
          channel: { id: r.channelId, userCount, deviceCount, clientCount, connectionCount },
          settings: publicSettings(settings),
        };
        return { answer, events, deliveries: [] };
      },
    };
  }

  async leave(r: Report<'client.leave'>): Promise<EdgeResults['client.leave']> {
    const entry = this.journal({ k: 'leave', report: r });
    let result;
    try {
      result = await this.store.call(this.leaveCall(r), entry);
    } catch (e) {
      // Leaving a channel one is not in (a retried report), or as a registration that ended
      // (`sessionId`), changes nothing.
      if (e instanceof DomainError && e.code === 'NotFound') return { ok: true };
      throw e;
    }
    await this.ctx.settle(entry, [], this.leftEvents(r.client.applicationId, result));
    return { ok: true };
  }

  private leaveCall(r: Report<'client.leave'>): ScriptCall<RemoveResult> {
    return this.store.removeMembersCall(r.client.applicationId, r.channelId, 'client', r.client, r.sessionId);
  }

  private leftEvents(a: string, result: RemoveResult): DomainEvent[] {
    const owner = { applicationId: a, organizationId: result.organizationId };
    const events: DomainEvent[] = [];
    for (const left of result.lefts) {
      const hash = [...result.clients.values()][0] ?? {};
      this.ctx.leftChannel(owner, left, this.ctx.client(left, hash), CLIENT_CAUSE, events);
    }
    return events;
  }

  async update(r: Report<'client.update'>): Promise<EdgeResults['client.update']> {
    const set: Record<string, string> = {};
    const del: string[] = [];
    for (const field of ['userAlias', 'deviceAlias', 'tag'] as const) {
      const v = r[field];
      if (v === undefined) continue;
      if (v === null) del.push(field);
      else set[field] = v;
    }
    const a = r.client.applicationId;
    const result = await this.store.clientPatch(a, r.client, set, del);
    const owner = { applicationId: a, organizationId: result.organizationId };
    await this.ctx.events.publish([
      domainEvent(owner, 'client.updated', CLIENT_CAUSE, { client: this.ctx.client(r.client, result.client) }),
    ]);
    return { ok: true };
  }

  /**
   * A message from a client: inside a channel (to all, or a user, device or client of it) or to a user, device or
   * client.
   */
  async message(r: Report<'client.message'>): Promise<EdgeResults['client.message']> {
    const a = r.client.applicationId;
    const sender = await this.senderOf(a, r.client, r.channelId);
    const owner = { applicationId: a, organizationId: sender.organizationId };
    const target = clientMessageTarget(a, r.channelId, r.to);
    let deliveries: Delivery[] = [];
    if (target) {
      const recipients = await this.recipients.resolve(target, { allowEmpty: true });
      deliveries = recipients
        .filter(
          (c) =>
            !(c.userId === r.client.userId && c.deviceId === r.client.deviceId && c.clientId === r.client.clientId),
        )
        .map((c) => ({
          gatewayId: c.gatewayId,
          client: { applicationId: a, userId: c.userId, deviceId: c.deviceId, clientId: c.clientId },
          push: { type: 'message', channelId: r.channelId, message: r.message, from: fromClient(sender.client) },
        }));
    }
    const type = r.channelId ? 'channel.client.message' : 'client.message';
    const event = domainEvent(owner, type, CLIENT_CAUSE, {
      channelId: r.channelId,
      client: sender.client,
      message: messagePart(r.message, sender.client),
    });
    await this.ctx.deliver(deliveries, [event]);
    return { delivered: deliveries.length };
  }

  private async senderOf(
    a: string,
    c: ClientIds,
    channelId: string | null,
  ): Promise<{ client: ClientRecord; organizationId: string }> {
    const k = this.store.keys;
    const commands: Array<[string, ...string[]]> = [
      ['hgetall', k.client(a, c.userId, c.deviceId, c.clientId)],
      ['hget', k.app(a), 'organizationId'],
    ];
    if (channelId !== null)
      commands.push(['hget', k.channelPart(a, channelId, 'clients'), clientMember(c.userId, c.deviceId, c.clientId)]);
    const [hash, org, claim] = (await this.store.read(commands)) as [
      Record<string, string>,
      string | null,
      string | null | undefined,
    ];
    if (!hash || Object.keys(hash).length === 0)
      throw new DomainError('NotFound', `Client '${c.clientId}' is not registered.`);
    if (channelId !== null) {
      if (!claim) throw new DomainError('NotFound', `Client '${c.clientId}' has not joined channel '${channelId}'.`);
      if (parseJson<{ disableSendMessage?: boolean }>(claim, {}).disableSendMessage === true) {
        throw new DomainError(
          'Forbidden',
          `The channel claim of client '${c.clientId}' does not allow sending messages in channel '${channelId}'.`,
        );
      }
    }
    return { client: this.ctx.client(c, hash), organizationId: org ?? '' };
  }

  async clientStats(r: Report<'client.stats'>): Promise<EdgeResults['client.stats']> {
    const a = r.client.applicationId;
    const sender = await this.senderOf(a, r.client, null);
    const owner = { applicationId: a, organizationId: sender.organizationId };
    const now = Date.now();
    await this.ctx.events.publish([
      domainEvent(
        owner,
        'client.stats',
        CLIENT_CAUSE,
        { client: sender.client, clientStats: mediaStats(r.stats, now, true) },
        now,
      ),
    ]);
    return { ok: true };
  }

  async open(r: Report<'connection.open'>): Promise<EdgeResults['connection.open']> {
    // Not journaled: an open causes no event.
    return (await this.single(this.openStep(r))) as EdgeResults['connection.open'];
  }

  private openStep(r: Report<'connection.open'>): Step<ConnectionSnapshot> {
    const a = r.client.applicationId;
    const ref = connRef(r);
    const { set } = connectionFields({
      tag: r.tag,
      streams: r.streams,
      remoteConnectionId: r.remoteConnectionId ?? null,
    });
    // sfu/mcu: placed on a media server by the same script (nothing to release when the open fails).
    const placement = r.type === 'sfu' || r.type === 'mcu' ? { timeoutMs: this.ctx.servers.heartbeatTimeoutMs } : null;
    return {
      call: this.store.openCall(a, ref, r.type, set, CLAIM_FLAG[r.type], placement),
      finish: async (snapshot) => {
        const settings = effectiveSettings(snapshot.levels, { ...r.client, connectionId: r.connectionId });
        const answer: EdgeResults['connection.open'] = {
          mediaServerId: snapshot.conn.mediaServerId ?? null,
          settings: publicSettings(settings),
        };
        return { answer, events: [], deliveries: [] };
      },
    };
  }

  async state(r: Report<'connection.state'>): Promise<EdgeResults['connection.state']> {
    return (await this.single(this.stateStep(r), r)) as EdgeResults['connection.state'];
  }

  private stateStep(r: Report<'connection.state'>): Step<StateResult> {
    const a = r.client.applicationId;
    const ref = connRef(r);
    return {
      call: this.stateCall(a, ref, r.state, ALLOWED_FROM[r.state], r.error ?? null, r.sessionId),
      finish: async (result) => ({
        answer: { ok: true },
        events: this.movedState(a, ref, r.state, result, CLIENT_CAUSE),
        deliveries: [],
      }),
    };
  }

  async close(r: Report<'connection.close'>): Promise<EdgeResults['connection.close']> {
    const entry = this.journal({ k: 'close', report: r });
    const a = r.client.applicationId;
    const ref = connRef(r);
    let events: DomainEvent[];
    try {
      events = this.movedState(
        a,
        ref,
        'closed',
        await this.store.call(this.stateCall(a, ref, 'closed', LIVE_STATES, null, r.sessionId), entry),
        CLIENT_CAUSE,
      );
    } catch (e) {
      // Closing a connection that is already gone (a retried report, or it failed), or of a
      // registration that ended (`sessionId`), changes nothing.
      if (e instanceof DomainError && e.code === 'NotFound') return { ok: true };
      throw e;
    }
    await this.ctx.settle(entry, [], events);
    return { ok: true };
  }

  /**
   * Moves a connection to a state (the store keeps its media server statistics); returns the events
   * to publish. `entry`: the change is journaled with it (the caller settles it).
   */
  async moveState(
    a: string,
    ref: ConnectionIds,
    state: ConnectionState,
    from: readonly string[],
    error: { code: string; message: string } | null,
    cause: EventCause,
    entry?: JournalEntry,
  ): Promise<DomainEvent[]> {
    return this.movedState(
      a,
      ref,
      state,
      await this.store.call(this.stateCall(a, ref, state, from, error), entry),
      cause,
    );
  }

  private stateCall(
    a: string,
    ref: ConnectionIds,
    state: ConnectionState,
    from: readonly string[],
    error: { code: string; message: string } | null,
    session?: string,
  ): ScriptCall<StateResult> {
    const terminal = state === 'closed' || state === 'failed';
    return this.store.connStateCall(a, ref, state, from, terminal, error ? JSON.stringify(error) : null, session);
  }

  /** The events of a state change the store applied. */
  private movedState(
    a: string,
    ref: ConnectionIds,
    state: ConnectionState,
    result: StateResult,
    cause: EventCause,
  ): DomainEvent[] {
    if (result.same) return [];
    const owner: EventOwner = { applicationId: a, organizationId: result.organizationId };
    const client = this.ctx.client(ref, result.client);
    const events: DomainEvent[] = [];
    if (result.closed) {
      this.ctx.closedConnection(owner, result.closed, client, cause, events);
    } else if (result.snapshot) {
      const s = result.snapshot;
      const type = connectionStateEvent(state);
      if (type)
        events.push(
          this.ctx.connectionEvent(owner, type, cause, {
            ...ref,
            client,
            conn: s.conn,
            levels: s.levels,
            at: result.at,
          }),
        );
    }
    return events;
  }

  /**
   * What the registry holds for the sessions of the gateway asking (see EdgeSessionState): one
   * atomic read per application, the clients answered in the order asked.
   */
  async sessions(r: EdgeSessionsRead): Promise<EdgeSessionsResult> {
    const byApp = new Map<string, number[]>();
    r.clients.forEach((c, i) => {
      const list = byApp.get(c.applicationId);
      if (list) list.push(i);
      else byApp.set(c.applicationId, [i]);
    });
    const out = new Array<EdgeSessionState | null>(r.clients.length).fill(null);
    await Promise.all(
      [...byApp].map(async ([a, asked]) => {
        const read = await this.store.sessions(
          a,
          asked.map((i) => r.clients[i]!),
        );
        asked.forEach((i, k) => {
          const s = read.clients[k];
          if (s) out[i] = sessionState(r.clients[i]!, s, read.seq);
        });
      }),
    );
    return { clients: out };
  }

  /**
   * A page of the clients registered through a gateway replica (its client set, SSCAN: a client may
   * come twice), so the gateway can find the registrations it has no session for.
   */
  async gatewayClients(r: EdgeGatewayClientsRead): Promise<EdgeGatewayClientsResult> {
    const [next, members] = await this.store.redis.sscan(
      this.store.keys.gatewayClients(r.gatewayId),
      r.cursor ?? '0',
      'COUNT',
      r.count ?? 200,
    );
    return { clients: members.map((m) => this.store.parseGatewayMember(m)), next: next === '0' ? null : next };
  }

  async connectionUpdate(r: Report<'connection.update'>): Promise<EdgeResults['connection.update']> {
    const a = r.client.applicationId;
    const ref = connRef(r);
    const { set, del } = connectionFields({
      tag: r.tag,
      streams: r.streams,
      localAudioMuted: r.localAudioMuted,
      localVideoMuted: r.localVideoMuted,
    });
    // An unmute the settings may disable is checked against them as read, then written only if no
    // settings write came in between (else checked again): the registry, not the edge's copy, decides.
    const unmute = unmutedKinds(r);
    let s = await this.store.connPatch(a, ref, set, del, unmute.length ? { unmute } : undefined);
    for (let checks = 1; s.check !== undefined; checks++) {
      checkUnmute(unmute, s.conn, s.levels, ref);
      if (checks > MAX_UNMUTE_CHECKS)
        throw new DomainError('Unavailable', 'The connection settings kept changing; try the update again.');
      s = await this.store.connPatch(a, ref, set, del, { unmute, seq: s.check });
    }
    const client = this.ctx.client(ref, s.client);
    const owner = { applicationId: a, organizationId: s.organizationId };
    await this.ctx.events.publish([
      this.ctx.connectionEvent(owner, 'connection.updated', CLIENT_CAUSE, {
        ...ref,
        client,
        conn: s.conn,
        levels: s.levels,
      }),
    ]);
    return { ok: true };
  }

  async connectionStats(r: Report<'connection.stats'>): Promise<EdgeResults['connection.stats']> {
    const a = r.client.applicationId;
    const ref = connRef(r);
    const now = Date.now();
    const stats = mediaStats(r.stats, now);
    const s = await this.store.connPatch(a, ref, { stats: JSON.stringify(stats) }, []);
    const client = this.ctx.client(ref, s.client);
    const owner = { applicationId: a, organizationId: s.organizationId };
    await this.ctx.events.publish([
      this.ctx.connectionEvent(owner, 'connection.stats', CLIENT_CAUSE, {
        ...ref,
        client,
        conn: s.conn,
        levels: s.levels,
        stats,
        at: now,
      }),
    ]);
    return { ok: true };
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
      connections: ch.connections.map((n) => ({
        connectionId: n.connectionId,
        settings: publicSettings(effectiveSettings(n.levels, { ...c, connectionId: n.connectionId })),
      })),
    })),
    settingsVersion: seq,
  };
}

/**
 * A report as its journal entry keeps it: without what only its script reads and its events never
 * need (a register's channel claims, the longest part of most reports).
 */
function forJournal(r: EdgeReport): EdgeReport {
  return r.kind === 'client.register' ? { ...r, claims: [] } : r;
}

function connRef(r: { client: ClientIds; channelId: string; connectionId: string }): ConnectionIds {
  return {
    userId: r.client.userId,
    deviceId: r.client.deviceId,
    clientId: r.client.clientId,
    channelId: r.channelId,
    connectionId: r.connectionId,
  };
}

/** The sender identity of a client's message. */
export function fromClient(c: ClientRecord) {
  return {
    userId: c.userId,
    userAlias: c.userAlias,
    deviceId: c.deviceId,
    deviceAlias: c.deviceAlias,
    clientId: c.clientId,
    clientTag: c.tag,
    clientRoles: [...c.roles],
  };
}

/** The sender identity of an admin message: the identity fields of the message body. */
export function fromBody(m: MessageBody) {
  return {
    userId: m.userId ?? null,
    userAlias: m.userAlias ?? null,
    deviceId: m.deviceId ?? null,
    deviceAlias: m.deviceAlias ?? null,
    clientId: null,
    clientTag: m.clientTag ?? null,
    clientRoles: m.clientRoles ?? null,
  };
}
