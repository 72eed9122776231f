import type { EdgeReport } from '@switchboard/contracts';
import { readJournalContext } from './journaled.js';

/** Journal contexts as stored: the named shape, and the first one (entries pending at an upgrade). */

const client = { applicationId: 'app', userId: 'u', deviceId: 'd', clientId: 'c' };
const leave: EdgeReport = { kind: 'client.leave', client, channelId: 'ch' };
const cause = { origin: 'server', forced: true } as const;

describe('readJournalContext', () => {
  it('reads an unregister written with the first field names', () => {
    const stored = {
      k: 'unregister',
      a: 'app',
      c: { userId: 'u', deviceId: 'd', clientId: 'c' },
      cause,
      gw: 'gw-1',
      session: 's-1',
    };
    expect(readJournalContext(JSON.parse(JSON.stringify(stored)))).toEqual({
      kind: 'unregister',
      client,
      cause,
      onlyIfGateway: 'gw-1',
      onlyIfSession: 's-1',
    });
  });

  it('reads edge reports applied together (`seq`) or alone, and the other kinds, in the first shape', () => {
    expect(readJournalContext({ k: 'edge', reports: [leave], seq: true })).toEqual({
      kind: 'edge',
      reports: [leave],
      together: true,
    });
    expect(readJournalContext({ k: 'edge', reports: [leave], seq: false })).toMatchObject({ together: false });
    expect(readJournalContext({ k: 'leave', report: leave })).toEqual({ kind: 'leave', report: leave });
    const target = { level: 'channel', applicationId: 'app', channelId: 'ch' };
    expect(readJournalContext({ k: 'kick', target })).toEqual({ kind: 'kick', target });
  });

  it('reads the named shape as it is', () => {
    const context = { kind: 'unregister', client, cause, onlyIfGateway: 'gw-1' };
    expect(readJournalContext(JSON.parse(JSON.stringify(context)))).toEqual(context);
  });

  it('reads a state change a media event caused', () => {
    const connection = { userId: 'u', deviceId: 'd', clientId: 'c', channelId: 'ch', connectionId: 'cn' };
    const context = { kind: 'media', applicationId: 'app', connection, state: 'connected' };
    expect(readJournalContext(JSON.parse(JSON.stringify(context)))).toEqual(context);
  });

  it('answers null for what is neither', () => {
    for (const stored of [null, 'text', {}, { k: 'other' }, { kind: 'other' }, { k: 'unregister', cause }])
      expect(readJournalContext(stored)).toBeNull();
  });
});
