import { Type, type TSchema } from '@sinclair/typebox';
import {
  ChannelRecording,
  ChannelRecordingPatch,
  ConnectionRecording,
  type RecordingCommandKind,
  type RecordingQueryKind,
} from '@switchboard/contracts';
import { A, C, UDC } from '../http/routes.js';

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

const R = `${C}/recordings/:channelRecordingId`;
const CN = `${C}/${UDC}/connections/:connectionId`;
const CR = `${CN}/recordings/:connectionRecordingId`;

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
    path: `${A}/recordings`,
    kind: 'channelRecordings.list',
    summary: 'List the channel recordings of an application',
    query: 'window',
    response: ChannelRecordingList,
  },
  {
    method: 'get',
    path: `${A}/recordings/count`,
    kind: 'channelRecordings.count',
    summary: 'Count the channel recordings of an application',
    query: 'count',
    response: Count,
  },
  {
    method: 'get',
    path: `${C}/recordings`,
    kind: 'channel.recordings.list',
    summary: 'List the recordings of a channel',
    query: 'window',
    response: ChannelRecordingList,
  },
  {
    method: 'get',
    path: `${C}/recordings/count`,
    kind: 'channel.recordings.count',
    summary: 'Count the recordings of a channel',
    query: 'count',
    response: Count,
  },
  {
    method: 'get',
    path: R,
    kind: 'channelRecording.get',
    summary: 'Get a channel recording with its connection recordings',
    response: ChannelRecording,
  },
  {
    method: 'patch',
    path: R,
    kind: 'channelRecording.update',
    summary: 'Update the expiry of a channel recording',
    body: ChannelRecordingPatch,
  },
  {
    method: 'delete',
    path: R,
    kind: 'channelRecording.delete',
    summary: 'Delete a channel recording (and its files when the recording says deleteFiles)',
  },
  text(`${R}/muxjson`, 'channelRecording.muxJson', 'The JSON of a channel recording for the mux tool'),
  text(`${R}/url`, 'channelRecording.url', 'Signed, expiring URL of the muxed file'),
  text(`${R}/audiourl`, 'channelRecording.audioUrl', 'Signed, expiring URL of the audio file'),
  text(`${R}/videourl`, 'channelRecording.videoUrl', 'Signed, expiring URL of the video file'),
  list(
    `${A}/connectionrecordings`,
    'application.connectionRecordings.list',
    'List the connection recordings of an application',
  ),
  list(
    `${A}/users/:userId/connectionrecordings`,
    'user.connectionRecordings.list',
    'List the connection recordings of a user',
  ),
  list(
    `${A}/users/:userId/devices/:deviceId/connectionrecordings`,
    'device.connectionRecordings.list',
    'List the connection recordings of a device',
  ),
  list(
    `${A}/${UDC}/connectionrecordings`,
    'client.connectionRecordings.list',
    'List the connection recordings of a client',
  ),
  list(`${C}/connectionrecordings`, 'channel.connectionRecordings.list', 'List the connection recordings in a channel'),
  list(
    `${C}/users/:userId/connectionrecordings`,
    'channel.user.connectionRecordings.list',
    'List the connection recordings of a user in a channel',
  ),
  list(
    `${C}/users/:userId/devices/:deviceId/connectionrecordings`,
    'channel.device.connectionRecordings.list',
    'List the connection recordings of a device in a channel',
  ),
  list(
    `${C}/${UDC}/connectionrecordings`,
    'channel.client.connectionRecordings.list',
    'List the connection recordings of a client in a channel',
  ),
  list(`${CN}/recordings`, 'connection.connectionRecordings.list', 'List the recordings of a connection'),
  list(
    `${R}/connectionrecordings`,
    'channelRecording.connectionRecordings.list',
    'List the connection recordings of a channel recording',
  ),
  list(
    `${R}/users/:userId/connectionrecordings`,
    'channelRecording.user.connectionRecordings.list',
    'List the connection recordings of a user in a channel recording',
  ),
  list(
    `${R}/users/:userId/devices/:deviceId/connectionrecordings`,
    'channelRecording.device.connectionRecordings.list',
    'List the connection recordings of a device in a channel recording',
  ),
  list(
    `${R}/${UDC}/connectionrecordings`,
    'channelRecording.client.connectionRecordings.list',
    'List the connection recordings of a client in a channel recording',
  ),
  list(
    `${R}/${UDC}/connections/:connectionId/recordings`,
    'channelRecording.connection.connectionRecordings.list',
    'List the connection recordings of a connection in a channel recording',
  ),
  {
    method: 'get',
    path: CR,
    kind: 'connectionRecording.get',
    summary: 'Get a connection recording',
    response: ConnectionRecording,
  },
  text(`${CR}/muxjson`, 'connectionRecording.muxJson', 'The JSON of a connection recording for the mux tool'),
  text(
    `${CR}/audiourl`,
    'connectionRecording.audioUrl',
    'Signed, expiring URL of the audio file of a connection recording',
  ),
  text(
    `${CR}/videourl`,
    'connectionRecording.videoUrl',
    'Signed, expiring URL of the video file of a connection recording',
  ),
];
