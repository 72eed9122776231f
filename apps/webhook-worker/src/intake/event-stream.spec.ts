import { eventStreamName, eventSubject } from '@switchboard/contracts';
import { decodeDomainEvent, eventStreamConfig } from './event-stream.js';

const enc = (v: unknown) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));
const good = { applicationId: 'app-1', organizationId: 'org-1', event: { id: 'e1', type: 'client.registered', timestamp: 1, origin: 'client', forced: false, channel: null, client: null, connection: null, message: null } };

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
  ])('refuses %s', (_name, value, reason) => {
    expect(decodeDomainEvent(enc(value))).toEqual({ ok: false, reason });
  });
});

describe('eventStreamConfig', () => {
  it('is the contract stream: every event subject of the namespace, 7 days, dedupe by message id for 2 minutes', () => {
    const c = eventStreamConfig('sb');
    expect(c.name).toBe(eventStreamName('sb'));
    expect(c.subjects).toEqual([eventSubject('sb', '>')]);
    expect(c.max_age).toBe(7 * 24 * 3600 * 1000 * 1_000_000);
    expect(c.duplicate_window).toBe(120_000 * 1_000_000);
    expect([c.retention, c.storage, c.discard]).toEqual(['limits', 'file', 'old']);
  });
});
