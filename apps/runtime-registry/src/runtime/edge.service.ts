import { Inject, Injectable } from '@nestjs/common';
import { DomainError, type DomainEvent, type EdgeReport, type EdgeResults } from '@switchboard/contracts';
import { SERVICE_CONFIG } from '@switchboard/service-kit';
import type { RegistryConfig } from '../config.js';
import { OperationJournal } from '../events/journal.js';
import type { Delivery } from '../events/pusher.js';
import { domainEvent, type EventCause } from '../model/events.js';
import { effectiveSettings, publicSettings } from '../model/settings.js';
import {
  LiveStore,
  type CallOutcome,
  type ClientIds,
  type IndexTransition,
  type JoinResult,
  type JournalEntry,
  type RegisterResult,
  type RemoveResult,
  type ScriptCall,
  type UnregisterResult,
} from '../store/live-store.js';
import { ChangeDelivery, type ChangeEffects } from './change-delivery.js';
import { Upstreams } from '../media/upstreams.js';
import { ChannelRecordingDefaults } from './channel-recording.js';
import { PeerRelay } from './peer-relay.js';
import { ClientReports } from './client-reports.js';
import { CLIENT_CAUSE, clientOf, leftChannelEvents, SERVER_CAUSE } from './connection-events.js';
import { ConnectionLifecycle } from './connection-lifecycle.js';
import { connectionOfReport, forJournal, pushTarget, TOGETHER, type Report, type Step } from './edge-steps.js';
import type { JournalContext } from './journaled.js';

/** The membership scripts of the store (LiveStore). */
export type MembershipStore = Pick<
  LiveStore,
  | 'registerCall'
  | 'unregisterCall'
  | 'joinCall'
  | 'removeMembersCall'
  | 'sequence'
  | 'sequenceOutcomes'
  | 'indexApply'
  | 'untrackPreviousGateway'
  | 'untrackGateway'
> & { call<T>(call: ScriptCall<T>, journal?: JournalEntry): Promise<T> };

/**
 * What the client edge reports (`runtime-registry.v1.edge`): registrations, channel membership,
 * connection lifecycles, stats and client messages. Each report is one atomic script; then the
 * events are published (awaited) and pushes sent.
 */
@Injectable()
export class EdgeService {
  constructor(
    @Inject(LiveStore) private readonly store: MembershipStore,
    private readonly connections: ConnectionLifecycle,
    private readonly clients: ClientReports,
    private readonly recordingDefaults: ChannelRecordingDefaults,
    private readonly upstreams: Upstreams,
    private readonly peers: PeerRelay,
    private readonly journal: OperationJournal,
    @Inject(ChangeDelivery) private readonly effects: ChangeEffects,
    @Inject(SERVICE_CONFIG) private readonly config: Pick<RegistryConfig, 'applicationIdleTtlSeconds'>,
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
        return this.clients.update(report);
      case 'client.message':
        return this.clients.message(report);
      case 'client.stats':
        return this.clients.stats(report);
      case 'connection.open':
        // Not journaled: an open causes no event.
        return (await this.single(this.connections.openStep(report))) as EdgeResults['connection.open'];
      case 'connection.state':
        return (await this.single(this.connections.stateStep(report), report)) as EdgeResults['connection.state'];
      case 'connection.update':
        return this.connections.update(report);
      case 'connection.stats':
        return this.connections.stats(report);
      case 'connection.close':
        return this.connections.close(report);
      case 'connection.relay':
        return this.peers.relay(report);
    }
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
            this.index(a, result.index),
            this.store.untrackPreviousGateway(a, r.client, r.gatewayId, result.previousGatewayId),
          ]);
        const owner = { applicationId: a, organizationId: r.organizationId };
        const events: DomainEvent[] = [];
        if (result.replaced) {
          // The registration of the client's previous session ended with this one (see rtRegister).
          const previous = clientOf(r.client, result.replaced.client);
          for (const left of result.replaced.lefts)
            events.push(...leftChannelEvents(owner, left, previous, SERVER_CAUSE));
          events.push(domainEvent(owner, 'client.unregistered', SERVER_CAUSE, { client: previous }, result.at));
        }
        if (result.created || result.replaced) {
          const client = clientOf(r.client, result.client);
          events.push(domainEvent(owner, 'client.registered', CLIENT_CAUSE, { client }, result.at));
        }
        // Registered again through another gateway replica: the session held by the old one ends.
        const moved: Delivery[] =
          result.previousGatewayId && result.previousGatewayId !== r.gatewayId
            ? [
                {
                  gatewayId: result.previousGatewayId,
                  client: pushTarget(a, r.client),
                  push: { type: 'unregistered', reason: 'The client registered again through another gateway.' },
                },
              ]
            : [];
        return { answer: { ok: true }, events, deliveries: moved };
      },
    };
  }

  /** Keeps the applications index in step with an in-use transition. */
  private async index(applicationId: string, transition: IndexTransition | null): Promise<void> {
    if (transition) await this.store.indexApply(applicationId, transition);
  }

  /**
   * Runs one report's script, then publishes its events and sends its pushes: its answer. `report`:
   * the change is journaled (see OperationJournal), for a report that may cause events.
   */
  private async single<T>(step: Step<T>, report?: EdgeReport): Promise<unknown> {
    const entry = report && this.journal.open({ kind: 'edge', reports: [forJournal(report)], together: false });
    const done = await step.finish(await this.store.call(step.call, entry));
    if (entry) await this.effects.settle(entry, done.deliveries, done.events);
    else await this.effects.deliver(done.deliveries, done.events);
    return done.answer;
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
   * Reports of one application applied as ONE script run, each exactly as on its own; their events
   * go out together, in order. Answers one outcome per report that ran (README, "Edge batches").
   */
  async together(reports: EdgeReport[]): Promise<Array<CallOutcome<unknown>>> {
    const steps: Array<Step<unknown>> = [];
    let prepError: { error: unknown } | undefined;
    for (const r of reports) {
      try {
        steps.push(await this.stepOf(r));
      } catch (error) {
        prepError = { error };
        break;
      }
    }
    const journaled = reports.slice(0, steps.length).map(forJournal);
    const entry = this.journal.open({ kind: 'edge', reports: journaled, together: true });
    const ran = await this.store.sequence(
      steps.map((s) => s.call),
      entry,
    );
    const { out, events, deliveries, firstWithEvents } = await this.finishAll(steps, ran);
    try {
      await this.effects.settle(entry, deliveries, events);
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

  /** The events of a journaled change of the client edge, from its context and its script's answer. */
  async recover(
    context: Extract<JournalContext, { kind: 'edge' | 'leave' | 'close' | 'unregister' }>,
    answer: string,
  ): Promise<DomainEvent[]> {
    switch (context.kind) {
      case 'edge': {
        const steps: Array<Step<unknown>> = [];
        for (const r of context.reports) steps.push(await this.stepOf(r, true));
        if (context.together) {
          const outcomes = this.store.sequenceOutcomes(
            steps.map((s) => s.call),
            answer,
          );
          return (await this.finishAll(steps, outcomes)).events;
        }
        const step = steps[0]!;
        return (await step.finish(step.call.result(JSON.parse(answer)))).events;
      }
      case 'leave': {
        const r = context.report;
        return this.leftEvents(r.client.applicationId, this.leaveCall(r).result(JSON.parse(answer)));
      }
      case 'close': {
        const r = context.report;
        const ref = connectionOfReport(r);
        return this.connections.stateEvents(r.client.applicationId, ref, 'closed', CLIENT_CAUSE, answer);
      }
      case 'unregister': {
        const { applicationId, ...ids } = context.client;
        const result = this.store.unregisterCall(applicationId, ids, 0).result(JSON.parse(answer));
        return result ? this.unregistered(applicationId, ids, context.cause, result) : [];
      }
    }
  }

  /** A report's step; `recovering`: only to read a journaled answer (see `recover`), its call does not run. */
  private async stepOf(r: EdgeReport, recovering = false): Promise<Step<unknown>> {
    switch (r.kind) {
      case 'client.register':
        return this.registerStep(r) as Step<unknown>;
      case 'client.join':
        return (await this.joinStep(r, recovering)) as Step<unknown>;
      case 'connection.open':
        return this.connections.openStep(r) as Step<unknown>;
      case 'connection.state':
        return this.connections.stateStep(r) as Step<unknown>;
      case 'client.unregister':
      case 'client.leave':
      case 'client.update':
      case 'client.message':
      case 'client.stats':
      case 'connection.update':
      case 'connection.stats':
      case 'connection.close':
      case 'connection.relay':
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
   * Unregisters a client (also the clients of a gateway that is gone); false when it was not
   * registered, or no longer through `onlyIfGateway` (and `onlyIfSession`). Its events carry the
   * time of the script that applied it.
   */
  async unregisterClient(
    a: string,
    c: ClientIds,
    cause: EventCause,
    onlyIfGateway?: string,
    onlyIfSession?: string,
  ): Promise<boolean> {
    const ids = { userId: c.userId, deviceId: c.deviceId, clientId: c.clientId };
    const client = { applicationId: a, ...ids };
    const entry = this.journal.open({ kind: 'unregister', client, cause, onlyIfGateway, onlyIfSession });
    const idleMs = this.config.applicationIdleTtlSeconds * 1000;
    const result = await this.store.call(
      this.store.unregisterCall(a, ids, idleMs, onlyIfGateway, onlyIfSession),
      entry,
    );
    if (!result) return false;
    await this.effects.settle(entry, [], await this.unregistered(a, ids, cause, result));
    return true;
  }

  /** What follows an unregister's script: the bookkeeping outside the application's keys, and its events. */
  private async unregistered(
    a: string,
    c: ClientIds,
    cause: EventCause,
    result: UnregisterResult,
  ): Promise<DomainEvent[]> {
    await this.index(a, result.index);
    const client = clientOf(c, result.client);
    await this.store.untrackGateway(a, c, client.gatewayId);
    const owner = { applicationId: a, organizationId: result.organizationId };
    const events = result.lefts.flatMap((left) => leftChannelEvents(owner, left, client, cause));
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
        const part = { channelId: r.channelId, client: clientOf(r.client, result.client) };
        const events: DomainEvent[] = [];
        // One moment: both events carry the time of the script that applied the join.
        if (result.activated) events.push(domainEvent(owner, 'channel.activated', CLIENT_CAUSE, part, result.at));
        if (!result.already) events.push(domainEvent(owner, 'channel.client.joined', CLIENT_CAUSE, part, result.at));
        const [userCount, deviceCount, clientCount, connectionCount] = result.counts;
        const settings = effectiveSettings(result.levels, { ...r.client, connectionId: null });
        const answer: EdgeResults['client.join'] = {
          channel: { id: r.channelId, userCount, deviceCount, clientCount, connectionCount },
          settings: publicSettings(settings),
          upstreams: connectionCount > 0 ? await this.upstreams.listFor(a, r.channelId, r.client) : [],
        };
        return { answer, events, deliveries: [] };
      },
    };
  }

  async leave(r: Report<'client.leave'>): Promise<EdgeResults['client.leave']> {
    const entry = this.journal.open({ kind: 'leave', report: r });
    let result;
    try {
      result = await this.store.call(this.leaveCall(r), entry);
    } catch (e) {
      // Leaving a channel one is not in (a retried report), or as a registration that ended
      // (`sessionId`), changes nothing.
      if (e instanceof DomainError && e.code === 'NotFound') return { ok: true };
      throw e;
    }
    await this.effects.settle(entry, [], this.leftEvents(r.client.applicationId, result));
    return { ok: true };
  }

  private leaveCall(r: Report<'client.leave'>): ScriptCall<RemoveResult> {
    return this.store.removeMembersCall(r.client.applicationId, r.channelId, 'client', r.client, r.sessionId);
  }

  private leftEvents(a: string, result: RemoveResult): DomainEvent[] {
    const owner = { applicationId: a, organizationId: result.organizationId };
    const registration = [...result.clients.values()][0] ?? {};
    return result.lefts.flatMap((left) => leftChannelEvents(owner, left, clientOf(left, registration), CLIENT_CAUSE));
  }
}
