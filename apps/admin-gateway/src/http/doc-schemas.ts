/**
 * Response schemas of interface A operations whose records the contract keeps as plain types
 * (connectors, the datastore page): published in the OpenAPI document only.
 */
import { Type } from '@sinclair/typebox';
import {
  ChannelSnapshot,
  ClientInChannelSnapshot,
  ClientInfo,
  ConnectionInfo,
  DeviceInChannelSnapshot,
  DeviceInfo,
  MediaServer,
  MediaServerStatistics,
  UserInChannelSnapshot,
  UserInfo,
} from '@switchboard/contracts';

export const ApplicationIdList = Type.Array(Type.String(), {
  $id: 'ApplicationIdList',
  description: 'Application ids in use',
});
export const ChannelSnapshotList = Type.Array(ChannelSnapshot, { description: 'Channel snapshots' });
export const UserInfoList = Type.Array(UserInfo);
export const UserInChannelSnapshotList = Type.Array(UserInChannelSnapshot);
export const DeviceInfoList = Type.Array(DeviceInfo);
export const DeviceInChannelSnapshotList = Type.Array(DeviceInChannelSnapshot);
export const ClientInfoList = Type.Array(ClientInfo);
export const ClientInChannelSnapshotList = Type.Array(ClientInChannelSnapshot);
export const ConnectionInfoList = Type.Array(ConnectionInfo);
export const MediaServerList = Type.Array(MediaServer);
export const MediaServerStatisticsList = Type.Array(MediaServerStatistics);

export const Connector = Type.Object(
  {
    id: Type.String(),
    type: Type.String({ description: 'Kind of connector, e.g. `sip`.' }),
    region: Type.Union([Type.String(), Type.Null()]),
    version: Type.Union([Type.String(), Type.Null()]),
    addresses: Type.Array(Type.String()),
    active: Type.Boolean(),
    lastHeartbeat: Type.String({ format: 'date-time' }),
  },
  {
    $id: 'Connector',
    additionalProperties: false,
    description: 'A registered connector (decision: the spec does not show the element shape).',
  },
);
export const ConnectorList = Type.Array(Connector);

export const DatastorePage = Type.Object(
  {
    entries: Type.Array(
      Type.Object(
        {
          key: Type.String(),
          type: Type.String({ description: 'Redis type: string, hash, set, zset, list.' }),
          value: Type.Unknown(),
        },
        { additionalProperties: false },
      ),
    ),
    next: Type.Union([Type.String(), Type.Null()], {
      description: 'Cursor of the next page (pass it as `cursor`); null on the last page.',
    }),
  },
  {
    $id: 'DatastorePage',
    additionalProperties: false,
    description: 'One page of the raw runtime datastore (secrets never included).',
  },
);
