import fc from 'fast-check';
import { describeContracts, type ContractTable } from '../interface-a/contract-table.testing.js';
import * as webhookMessaging from './webhooks.js';
import {
  WebhookMessagingSchemas,
  WebhookMessagingValidators,
  channelPatternMatches,
  selectChannelConfig,
  type ChannelConfigSelection,
  type WebhookDelivery,
} from './webhooks.js';

const scope = { organizationId: 'org-1', operator: false, principal: 'key-1' };
const UUID_1 = '7b0d3c8e-5f2a-4c59-9a4e-1f2b3c4d5e6f';
const UUID_2 = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';

const delivery: WebhookDelivery = {
  id: UUID_1,
  deliveryId: UUID_2,
  webhookId: 'wh-1',
  webhookSource: 'channel',
  organizationId: 'org-1',
  applicationId: 'app-1',
  channelId: 'room-1',
  eventId: 'evt-1',
  eventType: 'channel.client.joined',
  eventIds: ['evt-1'],
  eventCount: 1,
  batch: false,
  url: 'https://hooks.example.test/in',
  attempt: 2,
  statusCode: 503,
  error: 'HTTP 503',
  success: false,
  final: false,
  durationMs: 12,
  attemptedOn: 1740823200000,
  replayOf: null,
};

const table: ContractTable<typeof WebhookMessagingSchemas> = {
  WebhooksResolveRequest: {
    valid: { applicationId: 'app-1', channelId: null },
    wrong: { field: 'channelId', value: 5 },
  },
  ResolvedWebhook: {
    valid: {
      id: 'wh-1',
      source: 'application',
      url: 'https://x.test/',
      events: ['*'],
      batch: false,
      reliable: true,
      disabled: false,
    },
    wrong: { field: 'source', value: 'organization' },
  },
  WebhooksResolveResponse: {
    valid: {
      organizationId: 'org-1',
      sharedSecret: '<SHARED_SECRET>',
      channelConfigId: null,
      webhooks: [
        { id: 'wh-1', source: 'channel', url: null, events: null, batch: true, reliable: false, disabled: true },
      ],
    },
    wrong: { field: 'webhooks[0].batch', value: 'yes' },
  },
  WebhookDelivery: { valid: delivery, wrong: { field: 'attempt', value: 0 } },
  WebhookDeliveriesListRequest: {
    valid: { scope, query: { $filter: "eventType eq 'client.registered'", $top: '10' } },
    wrong: { field: 'query.$top', value: 10 },
  },
  WebhookDeliveryGetRequest: {
    valid: { scope, id: UUID_1, query: { $select: 'id,attempt' } },
    wrong: { field: 'id', value: 'not-a-uuid' },
  },
  WebhookDeliveryReplayRequest: { valid: { scope, id: UUID_1 }, wrong: { field: 'scope.operator', value: 'no' } },
  WebhookDeliveryReplayResult: {
    valid: { deliveryId: UUID_1, replayOf: UUID_2 },
    wrong: { field: 'replayOf', value: null },
  },
};

describeContracts('webhook messaging', WebhookMessagingSchemas, WebhookMessagingValidators, table, webhookMessaging);

describe('selectChannelConfig', () => {
  const cfg = (
    id: string,
    channelIdPattern: string,
    priority: number,
    isDefault = false,
  ): ChannelConfigSelection & { id: string } => ({
    id,
    channelIdPattern,
    priority,
    default: isDefault,
  });

  it('matches the exact channel id or `*`, nothing else', () => {
    expect(channelPatternMatches('*', 'room-1')).toBe(true);
    expect(channelPatternMatches('room-1', 'room-1')).toBe(true);
    expect(channelPatternMatches('room-1', 'room-10')).toBe(false);
    expect(channelPatternMatches('room-*', 'room-1')).toBe(false);
    expect(channelPatternMatches('ROOM-1', 'room-1')).toBe(false);
  });

  it('answers null outside a channel and when nothing matches (a non-matching default does not apply)', () => {
    expect(selectChannelConfig([cfg('a', '*', 0, true)], null)).toBeNull();
    expect(selectChannelConfig([], 'room-1')).toBeNull();
    expect(selectChannelConfig([cfg('a', 'room-2', 0, true), cfg('b', 'lobby', 9)], 'room-1')).toBeNull();
  });

  it('the highest priority wins, whatever the pattern', () => {
    const star = cfg('star', '*', 10);
    const specific = cfg('specific', 'room-1', 5);
    expect(selectChannelConfig([specific, star], 'room-1')).toBe(star);
    expect(selectChannelConfig([star, specific], 'room-1')).toBe(star);
    expect(selectChannelConfig([cfg('low', '*', -3), cfg('high', '*', 2)], 'room-1')?.id).toBe('high');
  });

  it('on equal priority the specific pattern wins over `*`', () => {
    const star = cfg('star', '*', 1, true);
    const specific = cfg('specific', 'room-1', 1);
    expect(selectChannelConfig([star, specific], 'room-1')).toBe(specific);
    expect(selectChannelConfig([star, specific], 'room-2')).toBe(star);
  });

  it('then the default one, then the smallest id, then the first listed', () => {
    expect(selectChannelConfig([cfg('b', '*', 0), cfg('c', '*', 0, true)], 'x')?.id).toBe('c');
    expect(selectChannelConfig([cfg('b', '*', 0), cfg('a', '*', 0)], 'x')?.id).toBe('a');
    const first = { channelIdPattern: '*', priority: 0, default: false, id: null };
    const second = { channelIdPattern: '*', priority: 0, default: false, id: null };
    expect(selectChannelConfig([first, second], 'x')).toBe(first);
    expect(selectChannelConfig([first, cfg('z', '*', 0)], 'x')?.id).toBe('z');
  });

  it('treats a missing priority as 0', () => {
    const none = { id: 'none', channelIdPattern: 'room-1', priority: null, default: null };
    expect(selectChannelConfig([none, cfg('neg', '*', -1)], 'room-1')).toBe(none);
    expect(selectChannelConfig([none, cfg('pos', '*', 1)], 'room-1')?.id).toBe('pos');
  });

  it('picks the same config whatever the order of the list (property)', () => {
    const config = fc.record({
      id: fc.uuid(),
      channelIdPattern: fc.constantFrom('*', 'room-1', 'room-2'),
      priority: fc.integer({ min: -2, max: 2 }),
      default: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(config, { selector: (c) => c.id, maxLength: 8 }),
        fc.constantFrom('room-1', 'room-2', 'room-3'),
        (configs, channelId) => {
          const chosen = selectChannelConfig(configs, channelId);
          const reversed = selectChannelConfig([...configs].reverse(), channelId);
          expect(reversed).toBe(chosen);
          const matching = configs.filter((c) => c.channelIdPattern === '*' || c.channelIdPattern === channelId);
          // none when nothing matches; else no matching config beats the chosen one on priority
          const best = matching.length === 0 ? null : Math.max(...matching.map((c) => c.priority));
          expect(chosen?.priority ?? null).toBe(best);
        },
      ),
    );
  });
});
