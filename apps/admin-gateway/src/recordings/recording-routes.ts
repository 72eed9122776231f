import { Type, type TSchema } from '@sinclair/typebox';
import {
  ChannelRecording,
  ChannelRecordingPatch,
  ConnectionRecording,
  type RecordingCommandKind,
  type RecordingQueryKind,
} from '@switchboard/contracts';
import { APPLICATION_PATH, CHANNEL_PATH, CLIENT_SUBPATH, CONNECTION_PATH } from '../http/routes.js';

/**
 * The interface A recording routes of http-contract.md, each mapped 1:1 to a recording-service
 * query or command kind. `window` lists take timestampMin/timestampMax (Unix seconds), skip and
 * take; `count` reads take the two timestamps.
 */
export interface RecordingRoute {
  method: 'get' | 'patch' | 'delete';
  path: string;
  kind: RecordingQueryKind | RecordingCommandKind;
  summary: string;
  query?: 'window' | 'count';
  response?: TSchema;
  body?: TSchema;
}

const ChannelRecordingList = Type.Array(ChannelRecording, { $id: 'ChannelRecordingList' });
const ConnectionRecordingList = Type.Array(ConnectionRecording, { $id: 'ConnectionRecordingList' });
const Count = Type.Integer({ minimum: 0, description: 'Number of recordings' });
const Text = Type.String();

const CHANNEL_RECORDING_PATH = `${CHANNEL_PATH}/recordings/:channelRecordingId`;
const CONNECTION_RECORDING_PATH = `${CONNECTION_PATH}/recordings/:connectionRecordingId`;

const list = (path: string, kind: RecordingQueryKind, summary: string): RecordingRoute => ({
  method: 'get',
  path,
  kind,
  summary,
  query: 'window',
  response: ConnectionRecordingList,
});
const text = (path: string, kind: RecordingQueryKind, summary: string): RecordingRoute => ({
  method: 'get',
  path,
  kind,
  summary,
  response: Text,
});

export const RECORDING_ROUTES: readonly RecordingRoute[] = [
  {
    method: 'get',
    path: `${APPLICATION_PATH}/recordings`,
    kind: 'channelRecordings.list',
    summary: 'List the channel recordings of an application',
    query: 'window',
    response: ChannelRecordingList,
  },
  {
    method: 'get',
    path: `${APPLICATION_PATH}/recordings/count`,
    kind: 'channelRecordings.count',
    summary: 'Count the channel recordings of an application',
    query: 'count',
    response: Count,
  },
  {
    method: 'get',
    path: `${CHANNEL_PATH}/recordings`,
    kind: 'channel.recordings.list',
    summary: 'List the recordings of a channel',
    query: 'window',
    response: ChannelRecordingList,
  },
  {
    method: 'get',
    path: `${CHANNEL_PATH}/recordings/count`,
    kind: 'channel.recordings.count',
    summary: 'Count the recordings of a channel',
    query: 'count',
    response: Count,
  },
  {
    method: 'get',
    path: CHANNEL_RECORDING_PATH,
    kind: 'channelRecording.get',
    summary: 'Get a channel recording with its connection recordings',
    response: ChannelRecording,
  },
  {
    method: 'patch',
    path: CHANNEL_RECORDING_PATH,
    kind: 'channelRecording.update',
    summary: 'Update the expiry of a channel recording',
    body: ChannelRecordingPatch,
  },
  {
    method: 'delete',
    path: CHANNEL_RECORDING_PATH,
    kind: 'channelRecording.delete',
    summary: 'Delete a channel recording (and its files when the recording says deleteFiles)',
  },
  text(
    `${CHANNEL_RECORDING_PATH}/muxjson`,
    'channelRecording.muxJson',
    'The JSON of a channel recording for the mux tool',
  ),
  text(`${CHANNEL_RECORDING_PATH}/url`, 'channelRecording.url', 'Signed, expiring URL of the muxed file'),
  text(`${CHANNEL_RECORDING_PATH}/audiourl`, 'channelRecording.audioUrl', 'Signed, expiring URL of the audio file'),
  text(`${CHANNEL_RECORDING_PATH}/videourl`, 'channelRecording.videoUrl', 'Signed, expiring URL of the video file'),
  list(
    `${APPLICATION_PATH}/connectionrecordings`,
    'application.connectionRecordings.list',
    'List the connection recordings of an application',
  ),
  list(
    `${APPLICATION_PATH}/users/:userId/connectionrecordings`,
    'user.connectionRecordings.list',
    'List the connection recordings of a user',
  ),
  list(
    `${APPLICATION_PATH}/users/:userId/devices/:deviceId/connectionrecordings`,
    'device.connectionRecordings.list',
    'List the connection recordings of a device',
  ),
  list(
    `${APPLICATION_PATH}/${CLIENT_SUBPATH}/connectionrecordings`,
    'client.connectionRecordings.list',
    'List the connection recordings of a client',
  ),
  list(
    `${CHANNEL_PATH}/connectionrecordings`,
    'channel.connectionRecordings.list',
    'List the connection recordings in a channel',
  ),
  list(
    `${CHANNEL_PATH}/users/:userId/connectionrecordings`,
    'channel.user.connectionRecordings.list',
    'List the connection recordings of a user in a channel',
  ),
  list(
    `${CHANNEL_PATH}/users/:userId/devices/:deviceId/connectionrecordings`,
    'channel.device.connectionRecordings.list',
    'List the connection recordings of a device in a channel',
  ),
  list(
    `${CHANNEL_PATH}/${CLIENT_SUBPATH}/connectionrecordings`,
    'channel.client.connectionRecordings.list',
    'List the connection recordings of a client in a channel',
  ),
  list(`${CONNECTION_PATH}/recordings`, 'connection.connectionRecordings.list', 'List the recordings of a connection'),
  list(
    `${CHANNEL_RECORDING_PATH}/connectionrecordings`,
    'channelRecording.connectionRecordings.list',
    'List the connection recordings of a channel recording',
  ),
  list(
    `${CHANNEL_RECORDING_PATH}/users/:userId/connectionrecordings`,
    'channelRecording.user.connectionRecordings.list',
    'List the connection recordings of a user in a channel recording',
  ),
  list(
    `${CHANNEL_RECORDING_PATH}/users/:userId/devices/:deviceId/connectionrecordings`,
    'channelRecording.device.connectionRecordings.list',
    'List the connection recordings of a device in a channel recording',
  ),
  list(
    `${CHANNEL_RECORDING_PATH}/${CLIENT_SUBPATH}/connectionrecordings`,
    'channelRecording.client.connectionRecordings.list',
    'List the connection recordings of a client in a channel recording',
  ),
  list(
    `${CHANNEL_RECORDING_PATH}/${CLIENT_SUBPATH}/connections/:connectionId/recordings`,
    'channelRecording.connection.connectionRecordings.list',
    'List the connection recordings of a connection in a channel recording',
  ),
  {
    method: 'get',
    path: CONNECTION_RECORDING_PATH,
    kind: 'connectionRecording.get',
    summary: 'Get a connection recording',
    response: ConnectionRecording,
  },
  text(
    `${CONNECTION_RECORDING_PATH}/muxjson`,
    'connectionRecording.muxJson',
    'The JSON of a connection recording for the mux tool',
  ),
  text(
    `${CONNECTION_RECORDING_PATH}/audiourl`,
    'connectionRecording.audioUrl',
    'Signed, expiring URL of the audio file of a connection recording',
  ),
  text(
    `${CONNECTION_RECORDING_PATH}/videourl`,
    'connectionRecording.videoUrl',
    'Signed, expiring URL of the video file of a connection recording',
  ),
];
