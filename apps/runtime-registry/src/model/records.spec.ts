import {
  InterfaceAValidators,
  WEBHOOK_EVENT_NAMES,
  WebhookValidators,
  type WebhookEventName,
} from '@switchboard/contracts';
import { connectionStateEvent, domainEvent, messagePart } from './events.js';
import {
  clientRecord,
  connectionFields,
  connectionInfo,
  mediaStats,
  parseFormat,
  storedConnection,
} from './records.js';
import { DEFAULT_SETTINGS } from './settings.js';

const client = clientRecord(
  { userId: 'u1', deviceId: 'd1', clientId: 'c1' },
  {
    userAlias: 'Ann',
    deviceAlias: 'phone',
    tag: 'speaker',
    roles: '["host"]',
    protocol: 'websocket',
    gatewayId: 'gw-1',
  },
);
const owner = { applicationId: 'app', organizationId: 'org' };

function info(overrides: Partial<Record<string, string>> = {}, settings = DEFAULT_SETTINGS) {
  const { set } = connectionFields({
    tag: 'cam',
    streams: {
      audio: { direction: 'sendrecv', formats: ['opus/48000/2'] },
      video: { direction: 'sendonly', formats: ['VP8/90000'], disabled: true },
      data: { direction: 'sendrecv', channelLabels: ['chat'] },
    },
    remoteConnectionId: null,
    mediaServerId: 'ms-1',
  });
  const conn = storedConnection({ state: 'connected', type: 'sfu', openedAt: '1000', ...set, ...overrides });
  return connectionInfo({ applicationId: 'app', channelId: 'ch', connectionId: 'cn1', client, conn, settings });
}

describe('connection info', () => {
  it('has every field of the interface A record', () => {
    const value = info();
    expect(InterfaceAValidators.ConnectionInfo.errors(value)).toEqual([]);
    expect(value).toEqual(
      expect.objectContaining({
        id: 'cn1',
        userAlias: 'Ann',
        clientTag: 'speaker',
        clientRoles: ['host'],
        clientProtocol: 'websocket',
        isSip: false,
        state: 'connected',
        type: 'sfu',
        tag: 'cam',
        hasAudio: true,
        hasVideo: true,
        hasData: true,
        audioDirection: 'sendrecv',
        videoDirection: 'sendonly',
        localVideoDisabled: true,
        audioFormats: [{ name: 'opus', clockRate: 48000, channelCount: 2, parameters: null }],
      }),
    );
  });

  it('shows the effective settings: recording, tag, admin mutes and unmute-disabled flags', () => {
    const value = info(
      {},
      { ...DEFAULT_SETTINGS, recording: true, recordingTag: 'rec', audioMuted: true, videoUnmuteDisabled: true },
    );
    expect(value).toEqual(
      expect.objectContaining({
        recording: true,
        recordingTag: 'rec',
        localAudioMuted: true,
        localVideoMuted: false,
        localVideoUnmuteDisabled: true,
      }),
    );
    expect(value.audioStream?.muted).toBe(true);
  });

  it('lists the transport its media server reported', () => {
    expect(info().transports).toEqual([]);
    const transport = {
      id: 'cn1:transport',
      protocol: 'udp',
      localAddress: '10.0.0.2:5000',
      remoteAddress: '10.0.0.1:40000',
      relayed: false,
      state: 'connected',
    };
    const value = info({ transport: JSON.stringify(transport) });
    expect(InterfaceAValidators.ConnectionInfo.errors(value)).toEqual([]);
    expect(value.transports).toEqual([transport]);
  });

  it('shows a mute the client reported itself', () => {
    expect(info({ localVideoMuted: '1' }).localVideoMuted).toBe(true);
  });

  it('a connection without streams is inactive in every direction', () => {
    const conn = storedConnection({ state: 'new', type: 'peer', openedAt: '1' });
    const value = connectionInfo({
      applicationId: 'a',
      channelId: 'c',
      connectionId: 'x',
      client,
      conn,
      settings: DEFAULT_SETTINGS,
    });
    expect(InterfaceAValidators.ConnectionInfo.errors(value)).toEqual([]);
    expect([value.hasAudio, value.audioDirection, value.audioStream, value.audioStreams]).toEqual([
      false,
      'inactive',
      null,
      [],
    ]);
  });

  it('parses media formats', () => {
    expect(parseFormat('VP8/90000')).toEqual({ name: 'VP8', clockRate: 90000, channelCount: null, parameters: null });
    expect(parseFormat('weird')).toEqual({ name: 'weird', clockRate: 0, channelCount: null, parameters: null });
  });
});

describe('domain events', () => {
  const stats = mediaStats({ bytesSent: 10, jitter: -1, frameWidth: 640, bogus: 'x' }, 1700000000000);

  function eventOf(type: WebhookEventName) {
    const parts = type.startsWith('connection.')
      ? { channelId: 'ch', client, connection: info(), connectionStats: type === 'connection.stats' ? stats : null }
      : type.startsWith('channel.')
        ? {
            channelId: 'ch',
            client,
            message: type.endsWith('.message')
              ? messagePart({ message: 'hi' }, type === 'channel.client.message' ? client : null)
              : null,
          }
        : type === 'server.message'
          ? { message: messagePart({ message: 'hi', userId: 'admin' }) }
          : {
              client,
              clientStats: type === 'client.stats' ? mediaStats({ bytesSent: 1 }, 1, true) : null,
              message: type === 'client.message' ? messagePart({ message: 'x' }, client) : null,
            };
    return domainEvent(owner, type, { origin: 'client', forced: false }, parts, 1700000000000);
  }

  it('every event the registry emits is a valid EventInfo', () => {
    const emitted = WEBHOOK_EVENT_NAMES.filter((n) => !n.includes('recording'));
    expect(emitted).toHaveLength(21);
    for (const type of emitted) {
      const e = eventOf(type);
      expect({ type, errors: WebhookValidators.EventInfo.errors(e.event) }).toEqual({ type, errors: [] });
      expect(e).toEqual({ event: expect.objectContaining({ type }), applicationId: 'app', organizationId: 'org' });
    }
  });

  it('each event has its own uuid id', () => {
    const ids = new Set(Array.from({ length: 100 }, () => eventOf('client.registered').event.id));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('stats keep known non-negative numbers only; client stats have no frame fields', () => {
    expect(stats).toEqual(
      expect.objectContaining({ timestamp: 1700000000000, bytesSent: 10, jitter: null, frameWidth: 640 }),
    );
    expect(stats).not.toHaveProperty('bogus');
    expect(mediaStats({ frameWidth: 640 }, 5, true).frameWidth).toBeNull();
  });

  it('the message part carries the sender identity: the client, or the fields of the body', () => {
    expect(messagePart({ message: 'm' }, client)).toEqual({
      message: 'm',
      clientTag: 'speaker',
      clientRoles: ['host'],
      deviceId: 'd1',
      deviceAlias: 'phone',
      userId: 'u1',
      userAlias: 'Ann',
    });
    expect(messagePart({ message: 'm', userAlias: 'Ops' })).toEqual({
      message: 'm',
      clientTag: null,
      clientRoles: null,
      deviceId: null,
      deviceAlias: null,
      userId: null,
      userAlias: 'Ops',
    });
  });

  it('maps connection states to their events', () => {
    expect(connectionStateEvent('new')).toBeNull();
    expect(connectionStateEvent('connected')).toBe('connection.connected');
    expect(connectionStateEvent('closed')).toBe('connection.closed');
  });
});
