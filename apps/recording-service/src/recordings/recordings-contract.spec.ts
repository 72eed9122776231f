import {
  ContractViolation,
  parseRecordingCommandRequest,
  parseRecordingQueryRequest,
  RECORDING_QUERY_PARAMS,
  recordingPathSegment,
} from '@switchboard/contracts';
import { loadRecordingServiceConfig } from '../config.js';
import { ChannelRecordingModel, ConnectionRecordingModel, parseOptions } from './odata.js';

const scope = { organizationId: 'org-1', operator: false, principal: 'key-1' };
const R = '0b8a7c2e-5d1f-4e3a-9b6c-1f2e3d4c5b6a';

function violation(fn: () => unknown): ContractViolation {
  try {
    fn();
  } catch (e) {
    if (e instanceof ContractViolation) return e;
    throw e;
  }
  throw new Error('expected a ContractViolation');
}

describe('the recording request contract', () => {
  it('has one kind per interface route: 9 channel recording reads, 14 connection lists, 4 connection reads', () => {
    const kinds = Object.keys(RECORDING_QUERY_PARAMS);
    expect(kinds.filter((k) => k.endsWith('connectionRecordings.list') && !k.startsWith('management.'))).toHaveLength(
      14,
    );
    const channelReads = kinds.filter(
      (k) =>
        (k.startsWith('channelRecording') || k.startsWith('channel.recordings')) && !k.includes('connectionRecordings'),
    );
    // Lists and counts of an application and a channel, get, mux JSON, three URLs (update and delete are commands).
    expect(channelReads).toHaveLength(9);
    expect(kinds.filter((k) => k.startsWith('connectionRecording.'))).toHaveLength(4);
  });

  it('accepts valid requests and defaults nothing', () => {
    const r = parseRecordingQueryRequest({
      scope,
      query: { kind: 'channel.recordings.list', applicationId: 'a', channelId: 'c', timestampMin: 0, take: 1000 },
    });
    expect(r.query).toEqual({
      kind: 'channel.recordings.list',
      applicationId: 'a',
      channelId: 'c',
      timestampMin: 0,
      take: 1000,
    });
    expect(
      parseRecordingCommandRequest({
        scope,
        command: {
          kind: 'channelRecording.update',
          applicationId: 'a',
          channelId: 'c',
          channelRecordingId: R,
          patch: { expiryTimestamp: null },
        },
      }).command.kind,
    ).toBe('channelRecording.update');
  });

  it('names the offending field', () => {
    expect(
      violation(() =>
        parseRecordingQueryRequest({
          scope,
          query: { kind: 'channelRecordings.list', applicationId: 'a', take: 1001 },
        }),
      ).errors[0]!.field,
    ).toBe('query.take');
    expect(
      violation(() =>
        parseRecordingQueryRequest({ scope, query: { kind: 'channelRecordings.count', applicationId: 'a', skip: 1 } }),
      ).errors[0]!.field,
    ).toBe('query.skip');
    expect(
      violation(() =>
        parseRecordingQueryRequest({
          scope,
          query: { kind: 'channelRecording.get', applicationId: 'a', channelId: 'c', channelRecordingId: 'x' },
        }),
      ).errors[0]!.field,
    ).toBe('query.channelRecordingId');
    expect(violation(() => parseRecordingQueryRequest({ scope, query: { kind: 'nope' } })).errors[0]!.field).toBe(
      'query.kind',
    );
    expect(violation(() => parseRecordingQueryRequest({ query: { kind: 'storage.usedSize' } })).errors[0]!.field).toBe(
      'scope',
    );
    expect(
      violation(() =>
        parseRecordingCommandRequest({
          scope,
          command: {
            kind: 'channelRecording.update',
            applicationId: 'a',
            channelId: 'c',
            channelRecordingId: R,
            patch: { expiryTimestamp: 'soon' },
          },
        }),
      ).errors[0]!.field,
    ).toBe('command.patch.expiryTimestamp');
  });

  it('path segments can never climb out of the recordings directory', () => {
    expect(recordingPathSegment('..')).toBe('%2E%2E');
    expect(recordingPathSegment('a/b')).toBe('a%2Fb');
    expect(recordingPathSegment('room 1')).toBe('room%201');
  });
});

describe('OData options of interface B', () => {
  it('binds filters to the recording models and refuses unknown properties with the option as field', () => {
    expect(
      parseOptions(
        { $filter: "channelId eq 'x' and startTimestamp gt 2024-01-01T00:00:00Z" },
        ChannelRecordingModel,
        false,
      ).filter,
    ).toBeDefined();
    expect(parseOptions({ $filter: 'audioMuted eq true', $top: '5' }, ConnectionRecordingModel, false).top).toBe(5);
    expect(() => parseOptions({ $filter: 'nope eq 1' }, ChannelRecordingModel, false)).toThrow(
      expect.objectContaining({ code: 'ValidationFailed', target: '$filter' }),
    );
    expect(() => parseOptions({ $filter: 'url eq null' }, ChannelRecordingModel, false)).toThrow(
      expect.objectContaining({ code: 'ValidationFailed' }),
    );
    expect(() => parseOptions({ $top: '2' }, ChannelRecordingModel, true)).toThrow(
      expect.objectContaining({ code: 'ValidationFailed', target: '$top' }),
    );
  });
});

describe('configuration', () => {
  const base = {
    NATS_URL: 'nats://127.0.0.1:4222',
    REDIS_URL: 'redis://127.0.0.1:6379',
    DATABASE_URL: 'postgres://u@h/db',
  };

  it('requires a long enough URL secret and never echoes it', () => {
    expect(() => loadRecordingServiceConfig(base)).toThrow(/RECORDINGS_URL_SECRET is required/);
    let message = '';
    try {
      loadRecordingServiceConfig({ ...base, RECORDINGS_URL_SECRET: 'short-secret' });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/RECORDINGS_URL_SECRET must be at least 32 characters/);
    expect(message).not.toContain('short-secret');
  });

  it('takes the S3 settings all together or not at all', () => {
    const ok = { ...base, RECORDINGS_URL_SECRET: 'x'.repeat(32) };
    expect(() => loadRecordingServiceConfig({ ...ok, RECORDINGS_S3_BUCKET: 'recordings' })).toThrow(
      /RECORDINGS_S3_ENDPOINT is required when any S3 setting is set/,
    );
    const s3 = {
      RECORDINGS_S3_ENDPOINT: 'http://127.0.0.1:9000',
      RECORDINGS_S3_BUCKET: 'recordings',
      RECORDINGS_S3_ACCESS_KEY_ID: 'id',
      RECORDINGS_S3_SECRET_ACCESS_KEY: 'secret',
    };
    expect(loadRecordingServiceConfig({ ...ok, ...s3 })).toMatchObject({
      s3Bucket: 'recordings',
      s3Region: 'us-east-1',
      s3PathStyle: true,
    });
  });

  it('has defaults for everything else', () => {
    const c = loadRecordingServiceConfig({ ...base, RECORDINGS_URL_SECRET: 'x'.repeat(32) });
    expect(c).toMatchObject({
      recordingsUrlTtlSeconds: 3600,
      recordingsMuxEnabled: true,
      recordingsRetentionSeconds: 0,
      eventsConsumerName: 'recording-service',
    });
  });
});
