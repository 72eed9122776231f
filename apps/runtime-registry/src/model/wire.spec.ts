import { ContractViolation } from '@switchboard/contracts';
import { parseCommand, parseEdge, parseHeartbeat, parseQuery } from './wire.js';

const scope = { organizationId: 'o', operator: false, principal: 'p' };

function violation(fn: () => unknown): Array<{ field: string; message: string }> {
  try {
    fn();
  } catch (e) {
    if (e instanceof ContractViolation) return e.errors;
    throw e;
  }
  throw new Error('no violation');
}

describe('wire validation', () => {
  it('accepts every query kind with its parameters', () => {
    expect(
      parseQuery({
        scope,
        query: {
          kind: 'connection.get',
          applicationId: 'a',
          channelId: 'c',
          userId: 'u',
          deviceId: 'd',
          clientId: 'cl',
          connectionId: 'cn',
        },
      }).query.kind,
    ).toBe('connection.get');
    expect(parseQuery({ scope, query: { kind: 'diagnostics.datastore', cursor: '0', count: 10 } }).query.kind).toBe(
      'diagnostics.datastore',
    );
  });

  it('names the offending field of a query', () => {
    expect(violation(() => parseQuery({ scope, query: { kind: 'channel.get', applicationId: 'a' } }))).toEqual([
      { field: 'query.channelId', message: 'is required' },
    ]);
    expect(violation(() => parseQuery({ scope, query: { kind: 'nope' } }))[0]!.field).toBe('query.kind');
    expect(
      violation(() => parseQuery({ scope, query: { kind: 'application.get', applicationId: 'a', extra: 1 } }))[0],
    ).toEqual({ field: 'query.extra', message: 'unknown field' });
    expect(violation(() => parseQuery({ query: { kind: 'applications.list' } }))[0]!.field).toBe('scope');
  });

  it('checks commands down to the patch fields', () => {
    const target = { level: 'channel', applicationId: 'a', channelId: 'c', patch: { audioMuted: 'yes' } };
    expect(violation(() => parseCommand({ scope, command: { kind: 'update', origin: 'api', target } }))[0]!.field).toBe(
      'command.target.patch.audioMuted',
    );
    const ok = parseCommand({
      scope,
      command: {
        kind: 'update',
        origin: 'api',
        target: { ...target, patch: { audioMuted: true, recordingMode: 'AudioVideo', excludedUserIds: ['u'] } },
      },
    });
    expect(ok.command.kind).toBe('update');
    expect(
      violation(() =>
        parseCommand({
          scope,
          command: { kind: 'kick', origin: 'api', target: { level: 'connection', applicationId: 'a', channelId: 'c' } },
        }),
      )[0]!.field,
    ).toMatch(/^command\.target\./);
  });

  it('checks edge reports', () => {
    const client = { applicationId: 'a', userId: 'u', deviceId: 'd', clientId: 'c' };
    expect(
      parseEdge({
        report: { kind: 'connection.state', client, channelId: 'ch', connectionId: 'cn', state: 'connected' },
      }),
    ).toEqual({
      report: { kind: 'connection.state', client, channelId: 'ch', connectionId: 'cn', state: 'connected' },
    });
    expect(
      violation(() =>
        parseEdge({
          report: { kind: 'connection.state', client, channelId: 'ch', connectionId: 'cn', state: 'dancing' },
        }),
      )[0]!.field,
    ).toBe('report.state');
    expect(
      violation(() =>
        parseEdge({ report: { kind: 'client.join', client: { ...client, userId: '' }, channelId: 'ch', claim: {} } }),
      )[0]!.field,
    ).toBe('report.client.userId');
  });

  it('checks the envelope of an edge batch, leaving its reports to be checked one by one', () => {
    const report = {
      kind: 'client.leave',
      client: { applicationId: 'a', userId: 'u', deviceId: 'd', clientId: 'c' },
      channelId: 'ch',
    };
    // An invalid report does not refuse the batch: it fails alone when its turn comes.
    expect(parseEdge({ report: { kind: 'batch', sequences: [[report, { kind: 'nonsense' }]] } })).toEqual({
      batch: { kind: 'batch', sequences: [[report, { kind: 'nonsense' }]] },
    });
    expect(violation(() => parseEdge({ report: { kind: 'batch', sequences: [] } }))[0]!.field).toBe('sequences');
    expect(violation(() => parseEdge({ report: { kind: 'batch', sequences: [[]] } }))[0]!.field).toBe('sequences[0]');
    const tooMany = Array.from({ length: 600 }, () => [report, report]);
    expect(violation(() => parseEdge({ report: { kind: 'batch', sequences: tooMany } }))[0]!.field).toBe(
      'report.sequences',
    );
  });

  it('accepts heartbeats with the fields senders echo', () => {
    const hb = parseHeartbeat({
      role: 'gateway',
      server: {
        id: 'g',
        region: null,
        version: '1',
        addresses: ['ws://x/sync'],
        active: true,
        lastHeartbeat: new Date().toISOString(),
      },
    });
    expect(hb.server.id).toBe('g');
    expect(violation(() => parseHeartbeat({ role: 'toaster', server: { id: 'g' } }))[0]!.field).toBe('role');
  });

  it('takes a media server id only as a uuid, lower-cased like the paths that name it', () => {
    expect(violation(() => parseHeartbeat({ role: 'mediaserver', server: { id: 'media-1' } }))).toEqual([
      { field: 'server.id', message: expect.stringContaining('UUID') },
    ]);
    expect(
      parseHeartbeat({ role: 'mediaserver', server: { id: '3F2B8C1E-5D4A-4E6F-9A7B-1C2D3E4F5A6B' } }).server.id,
    ).toBe('3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b');
    expect(parseHeartbeat({ role: 'connector', server: { id: 'sip-1' } }).server.id).toBe('sip-1');
  });
});
