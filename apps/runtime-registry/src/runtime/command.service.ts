import { Inject, Injectable } from '@nestjs/common';
import {
  DomainError,
  sameSettings,
  type CallerScope,
  type DomainEvent,
  type KickTarget,
  type MessageBody,
  type MessageTarget,
  type RuntimeCommand,
  type UpdateTarget,
} from '@switchboard/contracts';
import type { Delivery } from '../events/pusher.js';
import { domainEvent, messagePart, type EventOwner } from '../model/events.js';
import {
  effectiveSettings,
  levelWrites,
  publicSettings,
  type LevelSnapshot,
  type SettingsLevel,
} from '../model/settings.js';
import { targetChannel } from '../model/targets.js';
import { splitMember } from '../store/keys.js';
import { LiveReads } from '../store/live-reads.js';
import {
  LiveStore,
  type ClientIds,
  type JournalEntry,
  type LevelUpdateResult,
  type RemoveLevel,
  type RemoveResult,
  type ScriptCall,
  type UpdateLevel,
} from '../store/live-store.js';
import { ServersStore } from '../store/servers-store.js';
import { OperationJournal } from '../events/journal.js';
import type { ClientRecord } from '../model/records.js';
import { ChangeDelivery, type ChangeEffects } from './change-delivery.js';
import { API_CAUSE, clientOf, connectionEvent, leftChannelEvents } from './connection-events.js';
import { ConnectionLifecycle } from './connection-lifecycle.js';
import { fromBody, LIVE_STATES, type Effects } from './edge-steps.js';
import type { JournalContext } from './journaled.js';
import { Recipients, type Recipient } from './recipients.js';
import { checkOwner, requireOperator, type ApplicationOwnership } from './tenancy.js';

/** The store's changes and reads a command needs (LiveStore). */
export interface CommandStore {
  appOwner(applicationId: string): Promise<ApplicationOwnership>;
  call<T>(call: ScriptCall<T>, journal?: JournalEntry): Promise<T>;
  removeMembersCall: LiveStore['removeMembersCall'];
  levelUpdateCall: LiveStore['levelUpdateCall'];
  clientPatch: LiveStore['clientPatch'];
}

/** The registration reads of a command's clients (LiveReads). */
export type CommandReads = Pick<LiveReads, 'registration' | 'gatewayOf'>;

/** Enabling and disabling media servers (ServersStore). */
export interface MediaServerSwitch {
  setActive(mediaServerId: string, active: boolean): Promise<boolean>;
  mediaServers(only?: string): Promise<unknown[]>;
}

export interface MessageRecipients {
  resolve(target: MessageTarget, opts?: { allowEmpty?: boolean }): Promise<Recipient[]>;
}

/** The state changes of connections a kick closes with (ConnectionLifecycle). */
export type ConnectionCloser = Pick<ConnectionLifecycle, 'moveState' | 'stateEvents'>;

export interface JournalEntries {
  open(context: JournalContext): JournalEntry;
}

const LEVEL_KEY: Record<UpdateLevel, keyof LevelSnapshot> = {
  channel: 'ch',
  user: 'u',
  device: 'd',
  client: 'c',
  connection: 'n',
};

/**
 * Commands of interface A and the management API actions (`runtime-registry.v1.command`):
 * messages to the eight targets, kicks at the five levels, updates at the six levels, and media
 * server enable/disable. Answers null, or a DomainError (NotFound for unknown or foreign entities).
 */
@Injectable()
export class CommandService {
  constructor(
    @Inject(LiveStore) private readonly store: CommandStore,
    @Inject(LiveReads) private readonly reads: CommandReads,
    @Inject(ServersStore) private readonly servers: MediaServerSwitch,
    @Inject(Recipients) private readonly recipients: MessageRecipients,
    @Inject(ConnectionLifecycle) private readonly connections: ConnectionCloser,
    @Inject(OperationJournal) private readonly journal: JournalEntries,
    @Inject(ChangeDelivery) private readonly effects: ChangeEffects,
  ) {}

  private async authorize(scope: CallerScope, applicationId: string): Promise<EventOwner> {
    return checkOwner(scope, applicationId, await this.store.appOwner(applicationId));
  }

  async handle(scope: CallerScope, command: RuntimeCommand): Promise<null> {
    switch (command.kind) {
      case 'message':
        await this.message(scope, command.target, command.message);
        return null;
      case 'kick':
        await this.kick(scope, command.target);
        return null;
      case 'update':
        await this.update(scope, command.target);
        return null;
      case 'mediaserver.update':
        requireOperator(scope);
        if (command.patch.active !== undefined && command.patch.active !== null) {
          if (!(await this.servers.setActive(command.mediaServerId, command.patch.active))) {
            throw new DomainError('NotFound', `No media server '${command.mediaServerId}' is registered.`);
          }
        } else if (!(await this.servers.mediaServers(command.mediaServerId)).length) {
          throw new DomainError('NotFound', `No media server '${command.mediaServerId}' is registered.`);
        }
        return null;
    }
  }

  /**
   * Delivers a server message to exactly the clients the target names, with the sender identity of
   * the body. Its one event names the recipient when the target is one client (level `client` or
   * `channel.client`): the `client` part. A user or device target has no part of EventInfo that
   * could name it (`client` is one client, `message` the sender), so its event does not.
   */
  async message(scope: CallerScope, target: MessageTarget, message: MessageBody): Promise<number> {
    const owner = await this.authorize(scope, target.applicationId);
    const recipients = await this.recipients.resolve(target);
    const channelId = targetChannel(target);
    const from = fromBody(message);
    const deliveries: Delivery[] = recipients.map((c) => ({
      gatewayId: c.gatewayId,
      client: { applicationId: target.applicationId, userId: c.userId, deviceId: c.deviceId, clientId: c.clientId },
      push: { type: 'message', channelId, message, from },
    }));
    const client =
      target.level === 'client' || target.level === 'channel.client'
        ? await this.recipientClient(target.applicationId, target)
        : null;
    const event = domainEvent(owner, channelId ? 'channel.server.message' : 'server.message', API_CAUSE, {
      channelId,
      client,
      message: messagePart(message),
    });
    await this.effects.deliver(deliveries, [event]);
    return deliveries.length;
  }

  /** The client a client-level message target names, as registered (the target resolved, so it is). */
  private async recipientClient(a: string, c: ClientIds): Promise<ClientRecord> {
    return clientOf(c, await this.reads.registration({ applicationId: a, ...clientIdsOf(c) }));
  }

  /** Removes exactly the intended members from a channel and closes their connections there. */
  async kick(scope: CallerScope, target: KickTarget): Promise<void> {
    const a = target.applicationId;
    await this.authorize(scope, a);
    if (target.level === 'connection') {
      const gatewayId = await this.reads.gatewayOf({ applicationId: a, ...clientIdsOf(target) });
      const entry = this.journal.open({ kind: 'kick', target });
      const events = await this.connections.moveState(
        a,
        connectionOf(target),
        'closed',
        LIVE_STATES,
        null,
        API_CAUSE,
        entry,
      );
      await this.effects.settle(entry, [kickedConnection(target, gatewayId)], events);
      return;
    }
    const entry = this.journal.open({ kind: 'kick', target });
    const { events, deliveries } = this.kicked(a, await this.store.call(kickCall(this.store, target), entry));
    await this.effects.settle(entry, deliveries, events);
  }

  /** The events and pushes of members removed by a kick. */
  private kicked(a: string, result: RemoveResult): Effects {
    const owner: EventOwner = { applicationId: a, organizationId: result.organizationId };
    const events: DomainEvent[] = [];
    const deliveries: Delivery[] = [];
    for (const left of result.lefts) {
      const member = [...result.clients.keys()].find((m) => sameClient(m, left));
      const client = clientOf(left, (member && result.clients.get(member)) || {});
      events.push(...leftChannelEvents(owner, left, client, API_CAUSE));
      deliveries.push({
        gatewayId: client.gatewayId,
        client: { applicationId: a, userId: left.userId, deviceId: left.deviceId, clientId: left.clientId },
        push: { type: 'kicked', channelId: left.channelId, connectionId: null },
      });
    }
    return { events, deliveries };
  }

  async update(scope: CallerScope, target: UpdateTarget): Promise<void> {
    const a = target.applicationId;
    const owner = await this.authorize(scope, a);
    if (target.level === 'client') {
      // Not journaled: a client patch emits its event on every run, a retried one too.
      const set: Record<string, string> = {};
      const p = target.patch;
      if (typeof p.userAlias === 'string') set.userAlias = p.userAlias;
      if (typeof p.deviceAlias === 'string') set.deviceAlias = p.deviceAlias;
      if (typeof p.tag === 'string') set.tag = p.tag;
      if (Array.isArray(p.roles)) set.roles = JSON.stringify(p.roles);
      const result = await this.store.clientPatch(a, target, set, []);
      const client = clientOf(target, result.client);
      await this.effects.deliver(
        [
          {
            gatewayId: client.gatewayId,
            client: { applicationId: a, userId: target.userId, deviceId: target.deviceId, clientId: target.clientId },
            push: {
              type: 'client.updated',
              userAlias: client.userAlias,
              deviceAlias: client.deviceAlias,
              tag: client.tag,
              roles: [...client.roles],
            },
          },
        ],
        [domainEvent(owner, 'client.updated', API_CAUSE, { client })],
      );
      return;
    }
    const entry = this.journal.open({ kind: 'update', target, owner });
    const { events, deliveries } = this.updated(
      target,
      owner,
      await this.store.call(levelCall(this.store, target), entry),
    );
    await this.effects.settle(entry, deliveries, events);
  }

  /** The events and pushes of a settings update at a channel, user, device, client or connection level. */
  private updated(target: LevelTarget, owner: EventOwner, result: LevelUpdateResult): Effects {
    const a = target.applicationId;
    const level = updateLevel(target);
    const claim = target.level === 'channel.client' ? (target.patch.claim ?? null) : null;
    const events: DomainEvent[] = [];
    const deliveries: Delivery[] = [];
    const key = LEVEL_KEY[level];
    for (const t of result.targets) {
      const who = { userId: t.userId, deviceId: t.deviceId, clientId: t.clientId, connectionId: t.connectionId };
      const resolvedBefore = effectiveSettings({ ...t.levels, [key]: result.old }, who);
      const resolvedAfter = effectiveSettings(t.levels, who);
      const after = publicSettings(resolvedAfter);
      const pushed = !sameSettings(publicSettings(resolvedBefore), after);
      // The recording mode is not the client's business (no push), but the recording side's (event).
      if (!pushed && resolvedBefore.recordingMode === resolvedAfter.recordingMode) continue;
      const client = clientOf(t, t.client);
      if (pushed) {
        deliveries.push({
          gatewayId: client.gatewayId,
          client: { applicationId: a, userId: t.userId, deviceId: t.deviceId, clientId: t.clientId },
          push: {
            type: 'settings',
            channelId: target.channelId,
            connectionId: t.connectionId,
            settings: after,
            version: result.seq,
          },
        });
      }
      // One write, one moment: every connection it reached carries the time of the script.
      events.push(
        connectionEvent(owner, 'connection.updated', API_CAUSE, {
          channelId: target.channelId,
          connectionId: t.connectionId,
          client,
          conn: t.conn,
          levels: t.levels,
          at: result.at,
        }),
      );
    }
    if (claim && result.client && target.level === 'channel.client') {
      const client = clientOf(target, result.client);
      deliveries.push({
        gatewayId: client.gatewayId,
        client: { applicationId: a, userId: target.userId, deviceId: target.deviceId, clientId: target.clientId },
        push: { type: 'claim.updated', channelId: target.channelId, claim },
      });
    }
    return { events, deliveries };
  }

  /**
   * The events of a journaled kick or update, from its context and its script's answer (see
   * OperationJournal): exactly those its replica built.
   */
  recover(context: Extract<JournalContext, { kind: 'kick' | 'update' }>, answer: string): DomainEvent[] {
    if (context.kind === 'update') {
      const target = context.target as LevelTarget;
      return this.updated(target, context.owner, levelCall(this.store, target).result(JSON.parse(answer))).events;
    }
    const target = context.target;
    if (target.level === 'connection')
      return this.connections.stateEvents(target.applicationId, connectionOf(target), 'closed', API_CAUSE, answer);
    return this.kicked(target.applicationId, kickCall(this.store, target).result(JSON.parse(answer))).events;
  }
}

type LevelTarget = Exclude<UpdateTarget, { level: 'client' }>;
type ConnectionKick = Extract<KickTarget, { level: 'connection' }>;

function connectionOf(t: ConnectionKick) {
  return {
    userId: t.userId,
    deviceId: t.deviceId,
    clientId: t.clientId,
    channelId: t.channelId,
    connectionId: t.connectionId,
  };
}

function kickedConnection(t: ConnectionKick, gatewayId: string | null): Delivery {
  return {
    gatewayId,
    client: { applicationId: t.applicationId, userId: t.userId, deviceId: t.deviceId, clientId: t.clientId },
    push: { type: 'kicked', channelId: t.channelId, connectionId: t.connectionId },
  };
}

/** The script call of a kick of channel members. */
function kickCall(store: CommandStore, target: Exclude<KickTarget, ConnectionKick>): ScriptCall<RemoveResult> {
  const level: RemoveLevel =
    target.level === 'channel'
      ? 'channel'
      : target.level === 'channel.user'
        ? 'user'
        : target.level === 'channel.device'
          ? 'device'
          : 'client';
  const who = {
    userId: 'userId' in target ? target.userId : undefined,
    deviceId: 'deviceId' in target ? target.deviceId : undefined,
    clientId: 'clientId' in target ? target.clientId : undefined,
  };
  return store.removeMembersCall(target.applicationId, target.channelId, level, who);
}

function updateLevel(target: LevelTarget): UpdateLevel & SettingsLevel {
  return target.level === 'channel'
    ? 'channel'
    : target.level === 'channel.user'
      ? 'user'
      : target.level === 'channel.device'
        ? 'device'
        : target.level === 'channel.client'
          ? 'client'
          : 'connection';
}

/** The script call of a settings update below the application. */
function levelCall(store: CommandStore, target: LevelTarget): ScriptCall<LevelUpdateResult> {
  const level = updateLevel(target);
  const { set, lists } = levelWrites(level, target.patch);
  const claim = target.level === 'channel.client' ? (target.patch.claim ?? null) : null;
  const ref = {
    channelId: target.channelId,
    userId: 'userId' in target ? target.userId : undefined,
    deviceId: 'deviceId' in target ? target.deviceId : undefined,
    clientId: 'clientId' in target ? target.clientId : undefined,
    connectionId: 'connectionId' in target ? target.connectionId : undefined,
  };
  return store.levelUpdateCall(target.applicationId, level, ref, set, lists, claim);
}

function clientIdsOf(c: ClientIds): ClientIds {
  return { userId: c.userId, deviceId: c.deviceId, clientId: c.clientId };
}

function sameClient(member: string, c: { userId: string; deviceId: string; clientId: string }): boolean {
  const [u, d, cl] = splitMember(member);
  return u === c.userId && d === c.deviceId && cl === c.clientId;
}
