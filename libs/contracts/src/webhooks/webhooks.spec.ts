import { channelClaimSample, connectionErrorSample, UUID_A } from '../interface-a/samples.testing.js';
import { describeContracts, type ContractTable } from '../interface-a/contract-table.testing.js';
import * as webhooks from './index.js';
import {
  WEBHOOK_EVENT_NAMES,
  WebhookSchemas,
  WebhookValidators,
  isWebhookEventName,
  webhookWantsEvent,
  type EventInfo,
  type MediaStats,
  type WebhookEventChannel,
  type WebhookEventClient,
  type WebhookEventConnection,
  type WebhookEventMessage,
  type WebhookEventRecording,
} from './index.js';

const NOW = 1740823200000;

const stats: MediaStats = {
  timestamp: NOW,
  bytesSent: 1000,
  bytesReceived: 2000,
  packetsSent: 10,
  packetsReceived: 20,
  packetsLost: 0,
  jitter: 3.5,
  roundTripTime: 42,
  sendBitrate: 800000,
  receiveBitrate: 1200000,
  frameWidth: 1280,
  frameHeight: 720,
  frameRate: 30,
};
const recording: WebhookEventRecording = {
  id: UUID_A,
  startTimestamp: NOW - 60000,
  stopTimestamp: NOW,
  expiryTimestamp: null,
  hasAudio: true,
  hasVideo: true,
  ready: true,
  audioReady: true,
  videoReady: true,
  fileName: 'room-1.mkv',
  audioFileName: null,
  videoFileName: null,
  url: 'https://files.example.test/room-1.mkv',
  audioUrl: null,
  videoUrl: null,
  error: null,
};
const channel: WebhookEventChannel = { id: 'room-1', applicationId: 'app-1', channelRecording: null };
const client: WebhookEventClient = {
  id: 'client-1',
  userId: 'user-1',
  userAlias: 'Ada',
  deviceId: 'device-1',
  deviceAlias: null,
  tag: null,
  roles: ['speaker'],
  applicationId: 'app-1',
  stats: null,
};
const connection: WebhookEventConnection = {
  id: 'conn-1',
  applicationId: 'app-1',
  channelId: 'room-1',
  userId: 'user-1',
  userAlias: 'Ada',
  deviceId: 'device-1',
  deviceAlias: null,
  clientId: 'client-1',
  clientTag: null,
  clientRoles: ['speaker'],
  externalId: null,
  tag: null,
  type: 'sfu',
  state: 'failed',
  isSip: false,
  error: connectionErrorSample,
  remoteConnectionId: null,
  recording: false,
  recordingTag: null,
  hasAudio: true,
  hasVideo: true,
  hasData: false,
  audioDirection: 'sendrecv',
  videoDirection: 'sendrecv',
  dataDirection: 'inactive',
  localAudioMuted: false,
  localVideoMuted: false,
  localAudioDisabled: false,
  localVideoDisabled: false,
  remoteAudioDisabled: false,
  remoteVideoDisabled: false,
  stats: stats,
  connectionRecording: null,
};
const message: WebhookEventMessage = {
  message: 'hello',
  clientTag: null,
  clientRoles: null,
  deviceId: 'device-1',
  deviceAlias: null,
  userId: 'user-1',
  userAlias: 'Ada',
};
const event: EventInfo = {
  id: 'evt-1',
  timestamp: NOW,
  origin: 'client',
  type: 'channel.client.joined',
  forced: false,
  channel,
  client,
  connection: null,
  message: null,
};

const table: ContractTable<typeof WebhookSchemas> = {
  EventInfo: { valid: event, wrong: { field: 'timestamp', value: '2025-03-01T10:00:00Z' } },
  WebhookBatch: {
    valid: { batch: [event, { ...event, id: 'evt-2', type: 'channel.activated', client: null }] },
    wrong: { field: 'batch[1].forced', value: 'no' },
  },
  WebhookEventChannel: {
    valid: { ...channel, channelRecording: recording },
    wrong: { field: 'applicationId', value: 5 },
  },
  WebhookEventClient: { valid: { ...client, stats }, wrong: { field: 'roles', value: 'speaker' } },
  WebhookEventConnection: { valid: connection, wrong: { field: 'clientRoles[0]', value: 5 } },
  WebhookEventMessage: { valid: message, wrong: { field: 'message', value: { text: 'hi' } } },
  WebhookEventRecording: { valid: recording, wrong: { field: 'startTimestamp', value: 1.5 } },
  MediaStats: { valid: stats, wrong: { field: 'packetsLost', value: '0' } },
  ClientTokenPayload: {
    valid: {
      iat: 1740823200,
      exp: 1740826800,
      type: 'join',
      applicationId: 'app-1',
      userId: 'user-1',
      deviceId: 'device-1',
      clientId: 'client-1',
      clientRoles: ['speaker'],
      channels: [channelClaimSample],
    },
    wrong: { field: 'exp', value: '1740826800' },
    // RFC 7519: claims an implementation does not use are ignored (tokens minted by other issuers).
    open: true,
  },
};

describeContracts('webhooks', WebhookSchemas, WebhookValidators, table, webhooks);

describe('webhook event names', () => {
  it('has the 30 event names of the HTTP contract, unique', () => {
    expect(WEBHOOK_EVENT_NAMES).toHaveLength(30);
    expect(new Set(WEBHOOK_EVENT_NAMES).size).toBe(30);
    expect(WEBHOOK_EVENT_NAMES).toEqual(
      expect.arrayContaining(['channel.activated', 'connection.recordings.ready', 'server.message', 'client.stats']),
    );
  });

  it('recognises event names', () => {
    expect(isWebhookEventName('connection.closed')).toBe(true);
    expect(isWebhookEventName('connection.open')).toBe(false);
    expect(isWebhookEventName('*')).toBe(false);
    expect(isWebhookEventName(42)).toBe(false);
  });

  it('matches a webhook events list: empty or * means all', () => {
    expect(webhookWantsEvent([], 'client.registered')).toBe(true);
    expect(webhookWantsEvent(null, 'client.registered')).toBe(true);
    expect(webhookWantsEvent(['*'], 'client.registered')).toBe(true);
    expect(webhookWantsEvent(['client.registered'], 'client.registered')).toBe(true);
    expect(webhookWantsEvent(['client.unregistered'], 'client.registered')).toBe(false);
  });

  it('accepts every event name as an event type, and nothing else', () => {
    for (const type of WEBHOOK_EVENT_NAMES) expect(WebhookValidators.EventInfo.check({ ...event, type })).toBe(true);
    expect(WebhookValidators.EventInfo.errors({ ...event, type: '*' })).toEqual([
      { field: 'type', message: 'must be a webhook event name' },
    ]);
  });
});

describe('event info', () => {
  it('needs every part present, null when absent', () => {
    const { message: _m, ...rest } = event;
    expect(WebhookValidators.EventInfo.errors(rest)).toEqual([{ field: 'message', message: 'is required' }]);
    expect(
      WebhookValidators.EventInfo.check({
        ...event,
        channel: null,
        client: null,
        connection: null,
        message: null,
        type: 'server.message',
      }),
    ).toBe(true);
    expect(WebhookValidators.EventInfo.check({ ...event, type: 'connection.stats', connection })).toBe(true);
    expect(WebhookValidators.EventInfo.check({ ...event, type: 'client.message', message })).toBe(true);
  });

  it('rejects an empty batch', () => {
    expect(WebhookValidators.WebhookBatch.errors({ batch: [] }).map((e) => e.field)).toEqual(['batch']);
  });

  it('names the nullable part when a field inside it is wrong', () => {
    // Inside a `T|null` object the field itself is named.
    const errors = WebhookValidators.WebhookEventChannel.errors({
      ...channel,
      channelRecording: { ...recording, ready: 'yes' },
    });
    expect(errors.map((e) => e.field)).toEqual(['channelRecording.ready']);
  });

  it('carries a connection info subset only', () => {
    expect(WebhookValidators.WebhookEventConnection.errors({ ...connection, audioFormats: [] })).toEqual([
      { field: 'audioFormats', message: 'unknown field' },
    ]);
  });
});

describe('client token payload', () => {
  const payload = table.ClientTokenPayload.valid as Record<string, unknown>;

  it('accepts a minimal register token', () => {
    expect(
      WebhookValidators.ClientTokenPayload.errors({ iat: 1, exp: 2, type: 'register', applicationId: 'app-1' }),
    ).toEqual([]);
  });

  it('allows only register and join', () => {
    expect(WebhookValidators.ClientTokenPayload.errors({ ...payload, type: 'refresh' }).map((e) => e.field)).toEqual([
      'type',
    ]);
  });

  it('checks the channel claims', () => {
    expect(
      WebhookValidators.ClientTokenPayload.errors({ ...payload, channels: [{ id: 'room-1', canKick: 'yes' }] }).map(
        (e) => e.field,
      ),
    ).toEqual(['channels[0].canKick']);
  });

  it('requires iat, exp, type and applicationId', () => {
    expect(
      WebhookValidators.ClientTokenPayload.errors({})
        .map((e) => e.field)
        .sort(),
    ).toEqual(['applicationId', 'exp', 'iat', 'type']);
  });
});
