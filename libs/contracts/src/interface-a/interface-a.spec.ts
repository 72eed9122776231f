import * as interfaceA from './index.js';
import { InterfaceASchemas, InterfaceAValidators, Nullable, StringEnum } from './index.js';
import { isDateTime } from './record-schema.js';
import { describeContracts, type ContractTable } from './contract-table.testing.js';
import {
  T0,
  UUID_A,
  audioStreamSample,
  channelClaimSample,
  channelRecordingSample,
  computerSample,
  connectionErrorSample,
  connectionInfoSample,
  connectionRecordingSample,
  dataStreamSample,
  environmentSample,
  environmentServerSample,
  formatSample,
  recordingUpdateSample,
  transportSample,
} from './samples.testing.js';

const levelPatch = {
  recording: true,
  recordingTag: 'weekly',
  audioMuted: null,
  videoMuted: false,
  audioUnmuteDisabled: true,
  videoUnmuteDisabled: null,
};

const table: ContractTable<typeof InterfaceASchemas> = {
  MessageBody: {
    valid: {
      message: 'hello',
      clientTag: null,
      clientRoles: ['host'],
      deviceId: 'd',
      deviceAlias: null,
      userId: 'u',
      userAlias: 'Ada',
    },
    wrong: { field: 'clientRoles', value: 'host' },
  },
  ProblemBody: {
    valid: {
      type: 'about:blank',
      title: 'Not Found',
      status: 404,
      detail: 'No such channel',
      instance: '/admin/api/v1.0/x',
      code: 'NotFound',
    },
    wrong: { field: 'status', value: '404' },
    open: true,
  },
  ApplicationSnapshot: {
    valid: { id: 'app-1', channelCount: 1, userCount: 2, deviceCount: 2, clientCount: 3, connectionCount: 4 },
    wrong: { field: 'channelCount', value: '1' },
  },
  ChannelSnapshot: {
    valid: { id: 'room-1', userCount: 2, deviceCount: 2, clientCount: 3, connectionCount: 4 },
    wrong: { field: 'userCount', value: 1.5 },
  },
  UserInChannelSnapshot: {
    valid: { id: 'u', alias: null, deviceCount: 1, clientCount: 1, connectionCount: 2 },
    wrong: { field: 'alias', value: 7 },
  },
  UserInfo: {
    valid: { id: 'u', alias: 'Ada', deviceCount: 1, clientCount: 1, channelCount: 2 },
    wrong: { field: 'channelCount', value: -1 },
  },
  DeviceInChannelSnapshot: {
    valid: { id: 'd', userId: 'u', alias: null, clientCount: 1, connectionCount: 1 },
    wrong: { field: 'userId', value: null },
  },
  DeviceInfo: {
    valid: { id: 'd', userId: 'u', alias: 'phone', clientCount: 1, channelCount: 1 },
    wrong: { field: 'clientCount', value: true },
  },
  ClientInChannelSnapshot: {
    valid: { id: 'c', userId: 'u', deviceId: 'd', roles: [], connectionCount: 1 },
    wrong: { field: 'roles[0]', value: 1 },
  },
  ClientInfo: {
    valid: {
      id: 'c',
      tag: null,
      userId: 'u',
      userAlias: null,
      deviceId: 'd',
      deviceAlias: null,
      roles: ['a'],
      channelCount: 0,
    },
    wrong: { field: 'deviceAlias', value: false },
  },
  MediaServer: {
    valid: { id: 'ms-1', active: true, applications: ['app-1'], computer: computerSample },
    wrong: { field: 'computer.processorCount', value: 'eight' },
  },
  MediaServerComputer: { valid: computerSample, wrong: { field: 'ipAddresses', value: '10.0.0.5' } },
  MediaServerStatistics: {
    valid: {
      mediaServerId: UUID_A,
      pendingConnections: 0,
      activeConnections: 3,
      totalClosedConnections: 10,
      totalFailedConnections: 1,
      durationFailedConnections: 2.5,
      durationSeconds: 3600,
    },
    wrong: { field: 'mediaServerId', value: 'not-a-uuid' },
  },
  ApplicationEnvironment: { valid: environmentSample, wrong: { field: 'gateways[0].active', value: 'yes' } },
  EnvironmentServer: { valid: environmentServerSample, wrong: { field: 'lastHeartbeat', value: 'yesterday' } },
  ConnectionInfo: { valid: connectionInfoSample, wrong: { field: 'audioStreams[0].direction', value: 'both' } },
  ConnectionError: { valid: connectionErrorSample, wrong: { field: 'code', value: 5 } },
  MediaStreamInfo: { valid: audioStreamSample, wrong: { field: 'muted', value: 'no' } },
  DataStreamInfo: { valid: dataStreamSample, wrong: { field: 'channelLabels', value: 'chat' } },
  TransportInfo: { valid: transportSample, wrong: { field: 'protocol', value: 'sctp' } },
  MediaFormatInfo: { valid: formatSample, wrong: { field: 'clockRate', value: '48000' } },
  ChannelRecording: {
    valid: channelRecordingSample,
    wrong: { field: 'connectionRecordings[0].updates[0].index', value: 'first' },
  },
  ConnectionRecording: { valid: connectionRecordingSample, wrong: { field: 'stopTimestamp', value: 1700000000000 } },
  RecordingUpdate: { valid: recordingUpdateSample, wrong: { field: 'timestamp', value: '2025-13-45' } },
  ChannelRecordingPatch: { valid: { expiryTimestamp: T0 }, wrong: { field: 'expiryTimestamp', value: 1 } },
  ChannelPatch: {
    valid: {
      ...levelPatch,
      excludedUserIds: ['u'],
      excludedDeviceIds: null,
      excludedClientIds: [],
      excludedConnectionIds: null,
    },
    wrong: { field: 'excludedUserIds', value: 'u' },
  },
  UserInChannelPatch: {
    valid: { ...levelPatch, excludedDeviceIds: [], excludedClientIds: null, excludedConnectionIds: ['c'] },
    wrong: { field: 'recording', value: 'on' },
  },
  DeviceInChannelPatch: {
    valid: { ...levelPatch, excludedClientIds: [], excludedConnectionIds: [] },
    wrong: { field: 'audioMuted', value: 0 },
  },
  ClientPatch: {
    valid: { userAlias: 'Ada', deviceAlias: null, tag: 'vip', roles: ['host'] },
    wrong: { field: 'roles', value: 'host' },
  },
  ClientInChannelPatch: {
    valid: { claim: channelClaimSample, ...levelPatch, excludedConnectionIds: null },
    wrong: { field: 'recordingTag', value: 3 },
  },
  ConnectionPatch: { valid: { ...levelPatch }, wrong: { field: 'videoUnmuteDisabled', value: 'true' } },
  MediaServerPatch: { valid: { active: false }, wrong: { field: 'active', value: 'false' } },
};

describeContracts('interface A', InterfaceASchemas, InterfaceAValidators, table, interfaceA);

describe('interface A specifics', () => {
  it('accepts empty patch and message bodies (every field optional)', () => {
    for (const name of [
      'MessageBody',
      'ChannelPatch',
      'UserInChannelPatch',
      'DeviceInChannelPatch',
      'ClientPatch',
      'ClientInChannelPatch',
      'ConnectionPatch',
      'MediaServerPatch',
      'ChannelRecordingPatch',
    ] as const) {
      expect(InterfaceAValidators[name].errors({})).toEqual([]);
    }
  });

  it('checks the channel claim inside the client-in-channel patch', () => {
    expect(InterfaceAValidators.ClientInChannelPatch.errors({ claim: { canKick: 'yes' } }).map((e) => e.field)).toEqual(
      ['claim.canKick'],
    );
    expect(InterfaceAValidators.ClientInChannelPatch.check({ claim: null })).toBe(true);
  });

  it('requires every field of a response record', () => {
    const { hasVideo: _omitted, ...rest } = connectionInfoSample;
    expect(InterfaceAValidators.ConnectionInfo.errors(rest)).toEqual([{ field: 'hasVideo', message: 'is required' }]);
  });

  it('accepts every connection state, type and direction and nothing else', () => {
    const v = InterfaceAValidators.ConnectionInfo;
    for (const state of interfaceA.CONNECTION_STATES) expect(v.check({ ...connectionInfoSample, state })).toBe(true);
    for (const type of interfaceA.CONNECTION_TYPES) expect(v.check({ ...connectionInfoSample, type })).toBe(true);
    for (const audioDirection of interfaceA.STREAM_DIRECTIONS)
      expect(v.check({ ...connectionInfoSample, audioDirection })).toBe(true);
    expect(v.errors({ ...connectionInfoSample, state: 'open' }).map((e) => e.field)).toEqual(['state']);
    expect(v.errors({ ...connectionInfoSample, type: 'p2p' }).map((e) => e.field)).toEqual(['type']);
  });

  it('validates uuid and date-time formats', () => {
    const v = InterfaceAValidators.ChannelRecording;
    expect(v.errors({ ...channelRecordingSample, id: 'abc' }).map((e) => e.field)).toEqual(['id']);
    expect(v.errors({ ...channelRecordingSample, createdOn: '2025-02-30T25:00:00Z' }).map((e) => e.field)).toEqual([
      'createdOn',
    ]);
    expect(v.check({ ...channelRecordingSample, createdOn: '2025-03-01T10:00:00+02:00' })).toBe(true);
  });

  it.each([
    ['2024-02-29T23:59:59.123Z', true],
    ['2025-03-01T10:00:00-05:30', true],
    ['2025-02-29T10:00:00Z', false],
    ['2025-04-31T10:00:00Z', false],
    ['2025-03-01 10:00:00Z', false],
    ['2025-03-01T10:00:00', false],
    ['2025-03-01', false],
    ['2025-03-01T24:00:00Z', false],
    ['2030-06-30T23:59:60Z', false],
  ])('date-time %j is valid: %s', (value, ok) => {
    expect(isDateTime(value)).toBe(ok);
  });

  it('reports a Problem body with a non-integer status', () => {
    expect(
      InterfaceAValidators.ProblemBody.errors({ type: 'about:blank', title: 'x', status: 400.5 }).map((e) => e.field),
    ).toEqual(['status']);
  });

  it('builds nullable unions and string enums that describe themselves', () => {
    const v = interfaceA.validatorsFor({ X: Nullable(StringEnum(['a', 'b'])) }).X;
    expect(v.check(null)).toBe(true);
    expect(v.check('a')).toBe(true);
    expect(v.check('c')).toBe(false);
  });

  it('compiles validators lazily and once', () => {
    expect(InterfaceAValidators.ChannelSnapshot).toBe(InterfaceAValidators.ChannelSnapshot);
    expect(InterfaceAValidators.ChannelSnapshot.name).toBe('ChannelSnapshot');
  });
});
