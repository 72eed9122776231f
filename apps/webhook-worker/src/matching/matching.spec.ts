import type { DomainEvent, EventInfo, ResolvedWebhook } from '@switchboard/contracts';
import { channelOf, webhooksFor, webhooksOfEvent } from './matching.js';

const hook = (id: string, over: Partial<ResolvedWebhook> = {}): ResolvedWebhook => ({
  id,
  source: 'application',
  url: 'https://x.test/',
  events: null,
  batch: false,
  reliable: false,
  disabled: false,
  ...over,
});

describe('webhooksFor', () => {
  it('keeps enabled webhooks with a URL that want the event type', () => {
    const hooks = [
      hook('all-null'),
      hook('all-empty', { events: [] }),
      hook('all-star', { events: ['*'] }),
      hook('joined', { events: ['channel.client.joined'] }),
      hook('left', { events: ['channel.client.left'] }),
      hook('disabled', { disabled: true }),
      hook('no-url', { url: null }),
      hook('empty-url', { url: '' }),
    ];
    expect(webhooksFor(hooks, 'channel.client.joined').map((h) => h.id)).toEqual([
      'all-null',
      'all-empty',
      'all-star',
      'joined',
    ]);
    expect(webhooksFor(hooks, 'client.registered').map((h) => h.id)).toEqual(['all-null', 'all-empty', 'all-star']);
  });
});

describe('channelOf', () => {
  it('is the channel part, else the connection channel, else null', () => {
    expect(channelOf({ channel: { id: 'c1', applicationId: 'a', channelRecording: null }, connection: null })).toBe(
      'c1',
    );
    expect(channelOf({ channel: null, connection: { channelId: 'c2' } as never })).toBe('c2');
    expect(channelOf({ channel: null, connection: null })).toBeNull();
  });
});

describe('webhooksOfEvent', () => {
  const event = (type: string): EventInfo =>
    ({
      id: 'e1',
      timestamp: 1,
      origin: 'api',
      type,
      forced: false,
      channel: null,
      client: null,
      connection: null,
      message: null,
    }) as EventInfo;
  const resolved = [hook('a'), hook('b', { events: ['channel.activated'] })];

  it('an ordinary event goes where webhooksFor says', () => {
    const domain: DomainEvent = { event: event('channel.activated'), applicationId: 'app', organizationId: 'org' };
    expect(webhooksOfEvent(resolved, domain).map((h) => h.id)).toEqual(['a', 'b']);
  });

  it('a test event goes to its one webhook only, even disabled or not wanting the type; never without a URL', () => {
    const target = hook('c', { disabled: true, events: ['client.registered'], source: 'channel' });
    const domain: DomainEvent = {
      event: event('webhook.test'),
      applicationId: 'app',
      organizationId: 'org',
      testWebhook: target,
    };
    expect(webhooksOfEvent(resolved, domain)).toEqual([target]);
    expect(webhooksOfEvent(resolved, { ...domain, testWebhook: { ...target, url: null } })).toEqual([]);
  });
});
