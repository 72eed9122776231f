import { pixelCountOf, readUsageEvent } from './event-reader.js';

const T = Date.UTC(2025, 2, 1, 10, 30, 0);

const connection = {
  id: 'conn-1',
  applicationId: 'app-1',
  channelId: 'room-1',
  userId: 'user-1',
  userAlias: null,
  deviceId: 'device-1',
  deviceAlias: null,
  clientId: 'client-1',
  clientTag: null,
  clientRoles: [],
  externalId: null,
  tag: null,
  type: 'sfu',
  state: 'connected',
  isSip: false,
  error: null,
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
  stats: null,
  connectionRecording: null,
};

function domainEvent(type: string, parts: Record<string, unknown> = {}) {
  return {
    event: {
      id: `evt-${type}`,
      timestamp: T,
      origin: 'client',
      type,
      forced: false,
      channel: null,
      client: null,
      connection: null,
      message: null,
      ...parts,
    },
    applicationId: 'app-1',
    organizationId: 'org-1',
  };
}

describe('pixelCountOf', () => {
  it('reads the stats frame size and the stream sizes, the largest wins', () => {
    expect(pixelCountOf({ stats: { frameWidth: 1280, frameHeight: 720 } })).toBe(921_600);
    expect(
      pixelCountOf({ videoStream: { width: 640, height: 480 }, videoStreams: [{ width: 1920, height: 1080 }] }),
    ).toBe(2_073_600);
    expect(pixelCountOf({ stats: { frameWidth: null, frameHeight: null } })).toBeUndefined();
    expect(pixelCountOf({ stats: { frameWidth: -1, frameHeight: 720 } })).toBeUndefined();
    expect(pixelCountOf({ stats: { frameWidth: 12.5, frameHeight: 720 } })).toBeUndefined();
    expect(pixelCountOf(connection)).toBeUndefined();
  });

  it("reads the video stream runtime-registry attaches to an event's connection part, before and after its frame size is known", () => {
    const stream = {
      id: 'conn-1:video',
      tag: null,
      direction: 'sendrecv',
      muted: false,
      disabled: false,
      format: 'VP8/90000',
      frameRate: null,
    };
    const unknown = { ...connection, videoStream: { ...stream, width: null, height: null } };
    const known = { ...connection, videoStream: { ...stream, width: 640, height: 360, frameRate: 30 } };
    expect(readUsageEvent(domainEvent('connection.updated', { connection: unknown }))).toMatchObject({
      kind: 'ignored',
    });
    expect(readUsageEvent(domainEvent('connection.connected', { connection: unknown }))).not.toHaveProperty(
      'maxPixelCount',
    );
    expect(readUsageEvent(domainEvent('connection.updated', { connection: known }))).toMatchObject({
      kind: 'connection',
      maxPixelCount: 230_400,
    });
    expect(readUsageEvent(domainEvent('connection.closed', { connection: known }))).toMatchObject({
      kind: 'connection',
      endedAt: T,
      maxPixelCount: 230_400,
    });
  });
});

describe('readUsageEvent', () => {
  it('reads the connection lifecycle', () => {
    expect(readUsageEvent(domainEvent('connection.connected', { connection }))).toEqual({
      kind: 'connection',
      eventId: 'evt-connection.connected',
      applicationId: 'app-1',
      organizationId: 'org-1',
      connection: {
        applicationId: 'app-1',
        channelId: 'room-1',
        userId: 'user-1',
        deviceId: 'device-1',
        clientId: 'client-1',
        connectionId: 'conn-1',
      },
      connectedAt: T,
    });
    expect(readUsageEvent(domainEvent('connection.failed', { connection }))).toMatchObject({
      kind: 'connection',
      endedAt: T,
    });
    expect(
      readUsageEvent(
        domainEvent('connection.closed', {
          connection: { ...connection, stats: { frameWidth: 1280, frameHeight: 720 } },
        }),
      ),
    ).toMatchObject({
      kind: 'connection',
      endedAt: T,
      maxPixelCount: 921_600,
    });
    expect(
      readUsageEvent(
        domainEvent('connection.stats', {
          connection: { ...connection, stats: { frameWidth: 1280, frameHeight: 720 } },
        }),
      ),
    ).toMatchObject({
      kind: 'connection',
      maxPixelCount: 921_600,
    });
  });

  it('ignores what does not count, and reports what is malformed', () => {
    expect(readUsageEvent(domainEvent('connection.stats', { connection }))).toMatchObject({ kind: 'ignored' });
    expect(readUsageEvent(domainEvent('channel.server.message'))).toMatchObject({ kind: 'ignored' });
    expect(readUsageEvent(domainEvent('connection.connected'))).toMatchObject({ kind: 'invalid' });
    expect(
      readUsageEvent(domainEvent('connection.connected', { connection: { ...connection, clientId: '' } })),
    ).toMatchObject({ kind: 'invalid' });
    expect(readUsageEvent({ ...domainEvent('client.message'), organizationId: undefined })).toMatchObject({
      kind: 'invalid',
    });
    expect(readUsageEvent(domainEvent('client.message', { timestamp: 1.5 }))).toMatchObject({ kind: 'invalid' });
    expect(readUsageEvent({ event: { type: 'client.message' } })).toMatchObject({ kind: 'invalid', eventId: null });
    expect(readUsageEvent('nope')).toMatchObject({ kind: 'invalid' });
  });

  it('reads messages and the end of a client', () => {
    expect(readUsageEvent(domainEvent('channel.client.message'))).toMatchObject({ kind: 'message', at: T });
    expect(readUsageEvent(domainEvent('client.message'))).toMatchObject({ kind: 'message', at: T });
    const client = { id: 'client-1', userId: 'user-1', deviceId: 'device-1' };
    expect(
      readUsageEvent(
        domainEvent('channel.client.left', {
          client,
          channel: { id: 'room-1', applicationId: 'app-1', channelRecording: null },
        }),
      ),
    ).toMatchObject({
      kind: 'client-ended',
      clientId: 'client-1',
      channelId: 'room-1',
      at: T,
    });
    expect(readUsageEvent(domainEvent('client.unregistered', { client }))).toMatchObject({
      kind: 'client-ended',
      channelId: null,
    });
  });
});
