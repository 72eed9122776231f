import { decodeDomainEvent } from './event-stream.js';

const enc = (v: unknown) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));
const good = {
  applicationId: 'app-1',
  organizationId: 'org-1',
  event: {
    id: 'e1',
    type: 'client.registered',
    timestamp: 1,
    origin: 'client',
    forced: false,
    channel: null,
    client: null,
    connection: null,
    message: null,
  },
};

describe('decodeDomainEvent', () => {
  it('accepts a DomainEvent and keeps the EventInfo as written', () => {
    const extra = { ...good, event: { ...good.event, somethingNew: 1 } };
    expect(decodeDomainEvent(enc(extra))).toEqual({ ok: true, value: extra });
  });
  it.each([
    ['not JSON', '{', 'not JSON'],
    ['no application', { ...good, applicationId: '' }, 'applicationId missing'],
    ['no organization', { ...good, organizationId: 5 }, 'organizationId missing'],
    ['no event', { ...good, event: null }, 'event missing'],
    ['no event id', { ...good, event: { ...good.event, id: '' } }, 'event.id missing'],
    ['no type', { ...good, event: { ...good.event, type: undefined } }, 'event.type missing'],
    ['no timestamp', { ...good, event: { ...good.event, timestamp: '2025' } }, 'event.timestamp missing'],
    ['a test webhook without id', { ...good, testWebhook: { url: 'https://x.test/' } }, 'testWebhook without an id'],
    ['a test webhook that is no object', { ...good, testWebhook: 'w1' }, 'testWebhook without an id'],
  ])('refuses %s', (_name, value, reason) => {
    expect(decodeDomainEvent(enc(value))).toEqual({ ok: false, reason });
  });
});
