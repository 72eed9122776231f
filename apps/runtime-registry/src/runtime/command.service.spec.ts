import { DomainError, type CallerScope, type DomainEvent, type RuntimeCommand } from '@switchboard/contracts';
import type { Delivery } from '../events/pusher.js';
import type { LevelHash, LevelSnapshot } from '../model/settings.js';
import type { ClientPath } from '../store/live-reads.js';
import type { JournalEntry, LevelUpdateResult, RemoveResult, ScriptCall } from '../store/live-store.js';
import type { ChangeEffects } from './change-delivery.js';
import {
  CommandService,
  type CommandReads,
  type CommandStore,
  type ConnectionCloser,
  type JournalEntries,
  type MediaServerSwitch,
} from './command.service.js';
import type { JournalContext } from './journaled.js';
import { Recipients, type RecipientReads } from './recipients.js';

/**
 * CommandService against fakes of its store seam (no Redis, no NATS): tenancy, the pushes and events
 * of messages, kicks and settings updates, and what it journals.
 */

const ORG = 'org-own';
const APP = 'app-own';
const FOREIGN_APP = 'app-foreign';
const member: CallerScope = { organizationId: ORG, operator: false, principal: 'key-1' };
const operator: CallerScope = { organizationId: null, operator: true, principal: 'operator' };
const noLevels: LevelSnapshot = { ch: {}, u: {}, d: {}, c: {}, n: {} };

const alice = { userId: 'alice', deviceId: 'phone', clientId: 'a1' };
const bob = { userId: 'bob', deviceId: 'laptop', clientId: 'b1' };
const gatewayOf: Record<string, string> = { a1: 'gw-1', b1: 'gw-2' };

function written(seq: number, values: Record<string, boolean>): LevelHash {
  const out: LevelHash = {};
  for (const [name, on] of Object.entries(values))
    Object.assign(out, { [name]: on ? '1' : '0', [`${name}@`]: `${seq}` });
  return out;
}

/** The store's answers of the test: the script results it is set to give, and what it was asked. */
class FakeStore implements CommandStore {
  removed: RemoveResult = { lefts: [], clients: new Map(), organizationId: ORG };
  updated?: LevelUpdateResult;
  calls: Array<{ script: string; args: unknown; journal?: JournalEntry }> = [];

  async appOwner(a: string) {
    return a === APP || a === FOREIGN_APP
      ? { organizationId: a === APP ? ORG : 'org-other', inUse: true }
      : { organizationId: null, inUse: false };
  }
  async call<T>(c: ScriptCall<T>, journal?: JournalEntry): Promise<T> {
    this.calls.push({ script: c.script, args: c.args, journal });
    return c.result(null);
  }
  removeMembersCall: CommandStore['removeMembersCall'] = (a, channelId, level, who) => ({
    script: 'rtRemoveMembers',
    keys: [a],
    args: { channelId, level, who },
    result: () => this.removed,
  });
  levelUpdateCall: CommandStore['levelUpdateCall'] = (a, level, ref, set) => ({
    script: 'rtLevelUpdate',
    keys: [a],
    args: { level, ref, set },
    result: () => this.updated!,
  });
  clientPatch: CommandStore['clientPatch'] = async (_a, _c, set) => ({
    client: { ...set, gatewayId: 'gw-1' },
    channels: [],
    organizationId: ORG,
  });
}

/** Alice and Bob registered in APP; both members of channel `ch`. */
const reads: RecipientReads & CommandReads = {
  applicationClients: async () => [alice, bob],
  channelClients: async () => [alice, bob],
  userClients: async (_a, userId) => [alice, bob].filter((c) => c.userId === userId),
  deviceClientIds: async () => [],
  clientRegistered: async (c) => [alice, bob].some((x) => x.clientId === c.clientId),
  gatewaysOf: async (_a, clients: ClientPath[]) => clients.map((c) => gatewayOf[c.clientId] ?? null),
  registration: async (c) => ({ userAlias: `${c.userId}!`, gatewayId: gatewayOf[c.clientId] ?? '' }),
  gatewayOf: async (c) => gatewayOf[c.clientId] ?? null,
};

class RecordedEffects implements ChangeEffects {
  delivered: Array<{ deliveries: Delivery[]; events: DomainEvent[]; entry?: JournalEntry }> = [];
  async deliver(deliveries: Delivery[], events: DomainEvent[]) {
    this.delivered.push({ deliveries, events });
  }
  async settle(entry: JournalEntry, deliveries: Delivery[], events: DomainEvent[]) {
    this.delivered.push({ deliveries, events, entry });
  }
}

function setup() {
  const store = new FakeStore();
  const effects = new RecordedEffects();
  const journaled: JournalContext[] = [];
  const journal: JournalEntries = {
    open: (context) => {
      journaled.push(context);
      return { id: `entry-${journaled.length}`, context: JSON.stringify(context) };
    },
  };
  const active = new Map([['ms-1', true]]);
  const servers: MediaServerSwitch = {
    setActive: async (id, value) => active.has(id) && (active.set(id, value), true),
    mediaServers: async (id) => (id && active.has(id) ? [{ id }] : []),
  };
  const closer: ConnectionCloser = {
    moveState: async () => [],
    stateEvents: () => [],
  };
  const service = new CommandService(store, reads, servers, new Recipients(reads), closer, journal, effects);
  return { service, store, effects, journaled, active };
}

async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof DomainError) return `${e.code}: ${e.message}`;
    throw e;
  }
  return 'answered';
}

const message = (target: Extract<RuntimeCommand, { kind: 'message' }>['target']): RuntimeCommand => ({
  kind: 'message',
  target,
  message: { message: 'hello', userId: 'admin', userAlias: 'Admin' },
  origin: 'api',
});

describe('CommandService messages', () => {
  it('pushes a channel message to every member through its gateway, with one event naming the channel', async () => {
    const { service, effects } = setup();
    await service.handle(member, message({ level: 'channel', applicationId: APP, channelId: 'ch' }));
    const [sent] = effects.delivered;
    expect(sent!.deliveries.map((d) => [d.gatewayId, d.client.clientId, d.push.type])).toEqual([
      ['gw-1', 'a1', 'message'],
      ['gw-2', 'b1', 'message'],
    ]);
    expect(sent!.deliveries[0]!.push).toMatchObject({ channelId: 'ch', from: { userId: 'admin', clientId: null } });
    expect(sent!.events.map((e) => [e.event.type, e.event.channel?.id, e.event.client])).toEqual([
      ['channel.server.message', 'ch', null],
    ]);
    expect(sent!.entry).toBeUndefined();
  });

  it('names the recipient client in the event of a client-level message, and reaches only that client', async () => {
    const { service, effects } = setup();
    await service.handle(member, message({ level: 'client', applicationId: APP, ...bob }));
    const [sent] = effects.delivered;
    expect(sent!.deliveries.map((d) => d.client.clientId)).toEqual(['b1']);
    expect(sent!.events[0]!.event.type).toBe('server.message');
    expect(sent!.events[0]!.event.client).toMatchObject({ id: 'b1', userAlias: 'bob!' });
  });

  it("answers NotFound for another organization's application and for a target without clients", async () => {
    const { service, effects } = setup();
    expect(await failure(service.handle(member, message({ level: 'application', applicationId: FOREIGN_APP })))).toBe(
      `NotFound: No application '${FOREIGN_APP}' is in use.`,
    );
    expect(await failure(service.handle(member, message({ level: 'user', applicationId: APP, userId: 'carol' })))).toBe(
      "NotFound: User 'carol' has no registered client.",
    );
    expect(effects.delivered).toEqual([]);
  });
});

describe('CommandService kicks', () => {
  it('journals the kick, pushes `kicked` to each removed member and emits their departures', async () => {
    const { service, store, effects, journaled } = setup();
    store.removed = {
      organizationId: ORG,
      clients: new Map([['bob/laptop/b1', { gatewayId: 'gw-2' }]]),
      lefts: [{ ...bob, channelId: 'ch', closed: [], deactivated: true, at: 1000 }],
    };
    const target = { level: 'channel.user', applicationId: APP, channelId: 'ch', userId: 'bob' } as const;
    await service.handle(member, { kind: 'kick', target, origin: 'api' });
    expect(journaled).toEqual([{ kind: 'kick', target }]);
    expect(store.calls).toEqual([
      {
        script: 'rtRemoveMembers',
        args: { channelId: 'ch', level: 'user', who: { userId: 'bob', deviceId: undefined, clientId: undefined } },
        journal: { id: 'entry-1', context: JSON.stringify({ kind: 'kick', target }) },
      },
    ]);
    const [settled] = effects.delivered;
    expect(settled!.entry?.id).toBe('entry-1');
    expect(settled!.deliveries).toEqual([
      {
        gatewayId: 'gw-2',
        client: { applicationId: APP, ...bob },
        push: { type: 'kicked', channelId: 'ch', connectionId: null },
      },
    ]);
    expect(settled!.events.map((e) => [e.event.type, e.event.origin, e.event.forced, e.event.timestamp])).toEqual([
      ['channel.client.left', 'api', true, 1000],
      ['channel.deactivated', 'api', true, 1000],
    ]);
  });
});

describe('CommandService settings updates', () => {
  it('pushes settings and emits connection.updated only where the effective settings changed', async () => {
    const { service, store, effects } = setup();
    const channelMute = written(7, { audioMuted: true });
    const target = (client: typeof alice, connectionId: string, levels: LevelSnapshot) => ({
      ...client,
      channelId: 'ch',
      connectionId,
      conn: { state: 'connected', type: 'sfu' },
      client: { gatewayId: gatewayOf[client.clientId]! },
      levels,
    });
    store.updated = {
      old: {},
      seq: 7,
      at: 2000,
      claimChanged: false,
      client: null,
      organizationId: ORG,
      targets: [
        // Alice: muted by the channel's write.
        target(alice, 'cn-a', { ...noLevels, ch: channelMute }),
        // Bob: his own later unmute still wins over the channel's mute, so nothing changes for him.
        target(bob, 'cn-b', { ...noLevels, ch: channelMute, u: written(8, { audioMuted: false }) }),
      ],
    };
    await service.handle(member, {
      kind: 'update',
      target: { level: 'channel', applicationId: APP, channelId: 'ch', patch: { audioMuted: true } },
      origin: 'api',
    });
    const [settled] = effects.delivered;
    expect(settled!.deliveries).toHaveLength(1);
    expect(settled!.deliveries[0]).toMatchObject({
      gatewayId: 'gw-1',
      client: { clientId: 'a1' },
      push: { type: 'settings', channelId: 'ch', connectionId: 'cn-a', version: 7, settings: { audioMuted: true } },
    });
    expect(settled!.events.map((e) => [e.event.type, e.event.connection?.id, e.event.timestamp])).toEqual([
      ['connection.updated', 'cn-a', 2000],
    ]);
    expect(store.calls[0]!.args).toMatchObject({ level: 'channel', ref: { channelId: 'ch' } });
  });

  it('patches a client without journaling it and pushes client.updated', async () => {
    const { service, effects, journaled } = setup();
    await service.handle(member, {
      kind: 'update',
      target: { level: 'client', applicationId: APP, ...alice, patch: { tag: 'stage', roles: ['host'] } },
      origin: 'api',
    });
    expect(journaled).toEqual([]);
    const [sent] = effects.delivered;
    expect(sent!.entry).toBeUndefined();
    expect(sent!.deliveries[0]!.push).toEqual({
      type: 'client.updated',
      userAlias: null,
      deviceAlias: null,
      tag: 'stage',
      roles: ['host'],
    });
    expect(sent!.events[0]!.event.type).toBe('client.updated');
  });
});

describe('CommandService media servers', () => {
  it('needs an operator, and answers NotFound for an unknown media server', async () => {
    const { service, active } = setup();
    const disable: RuntimeCommand = { kind: 'mediaserver.update', mediaServerId: 'ms-1', patch: { active: false } };
    expect(await failure(service.handle(member, disable))).toBe(
      'Forbidden: This operation needs an operator credential.',
    );
    expect(active.get('ms-1')).toBe(true);
    await service.handle(operator, disable);
    expect(active.get('ms-1')).toBe(false);
    expect(
      await failure(service.handle(operator, { kind: 'mediaserver.update', mediaServerId: 'ms-9', patch: {} })),
    ).toBe("NotFound: No media server 'ms-9' is registered.");
  });
});
