/**
 * One example of each `/sync` request with its result, and of each push, for the AsyncAPI document
 * (`examples` of each message). Typed by the contract; sync-schemas.spec.ts validates them too.
 */
import type { ServerPush } from '../messaging/runtime-push.js';
import type { SyncRequestDataOf, SyncRequestType } from './sync-frames.js';
import type { SyncPushType } from './sync-pushes.js';
import type { SyncResults } from './sync-results.js';

type RequestExamples = { [K in SyncRequestType]: { data: SyncRequestDataOf<K>; result: SyncResults[K] } };

const SETTINGS = {
  recording: false,
  recordingTag: null,
  audioMuted: false,
  videoMuted: false,
  audioUnmuteDisabled: false,
  videoUnmuteDisabled: false,
};
const CLAIM = { id: 'room-1', disableSendVideo: true };
const SDP = 'v=0\r\no=- 4611731400430051336 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n...';
const UPSTREAM = {
  connectionId: 'cn-bea-up',
  userId: 'u-bea',
  userAlias: 'Bea',
  deviceId: 'd-bea',
  deviceAlias: 'phone',
  clientId: 'c-bea',
  clientTag: null,
  audio: true,
  video: true,
  data: false,
};
const ANN = { userId: 'u-ann', userAlias: 'Ann', deviceId: 'd-ann', deviceAlias: 'laptop' };

export const SYNC_REQUEST_EXAMPLES: RequestExamples = {
  register: {
    data: { token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpYXQiOjE3Njc...', userAlias: 'Ann' },
    result: {
      protocolVersion: 2,
      applicationId: 'app-1',
      userId: 'u-ann',
      deviceId: 'd-ann',
      clientId: 'c-ann',
      gatewayId: '5b0c6f4e-0d8e-4c43-9d0b-6f5d2c1e8a77',
      resumed: false,
      channels: [],
      connections: [],
      droppedPushes: 0,
      iceServers: [
        { urls: ['stun:stun.example.com:3478'] },
        { urls: ['turn:turn.example.com:3478'], username: '1767225600:c-ann', credential: 'c2VjcmV0LWNyZWRlbnRpYWw=' },
      ],
    },
  },
  join: {
    data: { channelId: 'room-1' },
    result: {
      channelId: 'room-1',
      channel: { id: 'room-1', userCount: 2, deviceCount: 2, clientCount: 2, connectionCount: 1 },
      settings: SETTINGS,
      claim: CLAIM,
      upstreams: [UPSTREAM],
    },
  },
  leave: { data: { channelId: 'room-1' }, result: { channelId: 'room-1' } },
  'connection.open': {
    data: {
      channelId: 'room-1',
      connectionId: 'cn-ann-up',
      type: 'sfu',
      streams: {
        audio: { direction: 'sendonly', formats: ['opus/48000/2'] },
        video: { direction: 'sendonly', formats: ['VP8/90000', 'H264/90000'], width: 1280, height: 720, frameRate: 30 },
      },
    },
    result: {
      connectionId: 'cn-ann-up',
      channelId: 'room-1',
      state: 'new',
      mediaServerId: '00000000-0000-4000-8000-000000000001',
      settings: SETTINGS,
    },
  },
  'connection.state': {
    data: { connectionId: 'cn-ann-up', state: 'connecting' },
    result: { connectionId: 'cn-ann-up', state: 'connecting' },
  },
  'connection.update': {
    data: { connectionId: 'cn-ann-up', localAudioMuted: true },
    result: { connectionId: 'cn-ann-up', localAudioMuted: true, localVideoMuted: false },
  },
  'connection.close': { data: { connectionId: 'cn-ann-up' }, result: { connectionId: 'cn-ann-up' } },
  'connection.offer': {
    data: { connectionId: 'cn-ann-up', offer: { type: 'offer', sdp: SDP } },
    result: { connectionId: 'cn-ann-up', answer: { type: 'answer', sdp: SDP } },
  },
  'connection.subscribe': {
    data: { connectionId: 'cn-ann-down' },
    result: { connectionId: 'cn-ann-down', offer: { type: 'offer', sdp: SDP } },
  },
  'connection.answer': {
    data: { connectionId: 'cn-ann-down', answer: { type: 'answer', sdp: SDP } },
    result: { connectionId: 'cn-ann-down' },
  },
  'connection.candidates': {
    data: {
      connectionId: 'cn-ann-up',
      candidates: [
        {
          candidate: 'candidate:1 1 udp 2122260223 192.0.2.10 54400 typ host',
          sdpMid: '0',
          sdpMLineIndex: 0,
          usernameFragment: 'a1b2',
        },
      ],
    },
    result: { connectionId: 'cn-ann-up' },
  },
  'connection.relay': {
    data: { connectionId: 'cn-ann-peer', offer: { type: 'offer', sdp: SDP } },
    result: { connectionId: 'cn-ann-peer' },
  },
  stats: {
    data: { connectionId: 'cn-ann-up', stats: { bytesSent: 81920, packetsLost: 2, jitter: 0.004 } },
    result: {},
  },
  message: { data: { channelId: 'room-1', message: 'hello' }, result: { delivered: 1 } },
  'client.update': { data: { userAlias: 'Ann B.' }, result: {} },
  unregister: { data: {}, result: {} },
  ping: { data: {}, result: { time: '2026-01-01T12:00:00.000Z' } },
};

export const SYNC_PUSH_EXAMPLES: { [K in SyncPushType]: Extract<ServerPush, { type: K }> } = {
  message: {
    type: 'message',
    channelId: 'room-1',
    message: { message: 'hello', ...ANN, clientTag: null, clientRoles: ['participant'] },
    from: { ...ANN, clientId: 'c-ann', clientTag: null, clientRoles: ['participant'] },
  },
  kicked: { type: 'kicked', channelId: 'room-1', connectionId: null },
  settings: {
    type: 'settings',
    channelId: 'room-1',
    connectionId: 'cn-ann-up',
    settings: { ...SETTINGS, audioMuted: true, audioUnmuteDisabled: true },
    version: 12,
  },
  'client.updated': { type: 'client.updated', userAlias: 'Ann', deviceAlias: 'laptop', tag: null, roles: ['host'] },
  'claim.updated': { type: 'claim.updated', channelId: 'room-1', claim: { ...CLAIM, disableSendMessage: true } },
  unregistered: { type: 'unregistered', reason: 'The client is no longer registered.' },
  'connection.state': { type: 'connection.state', channelId: 'room-1', connectionId: 'cn-ann-up', state: 'connected' },
  'connection.offer': {
    type: 'connection.offer',
    channelId: 'room-1',
    connectionId: 'cn-ann-down',
    offer: { type: 'offer', sdp: SDP },
  },
  'connection.ended': {
    type: 'connection.ended',
    channelId: 'room-1',
    connectionId: 'cn-ann-down',
    reason: 'remote-left',
  },
  'upstream.opened': { type: 'upstream.opened', channelId: 'room-1', upstream: UPSTREAM },
  'upstream.closed': { type: 'upstream.closed', channelId: 'room-1', connectionId: 'cn-bea-up' },
  'connection.relayed': {
    type: 'connection.relayed',
    channelId: 'room-1',
    connectionId: 'cn-bea-peer',
    remoteConnectionId: 'cn-ann-peer',
    offer: { type: 'offer', sdp: SDP },
  },
};
