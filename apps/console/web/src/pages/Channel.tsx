import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { api, channelPath, clientInChannelPath, seg } from '../api';
import { DataTable } from '../DataTable';
import { LIVE_POLL_MS, usePolled } from '../hooks';
import { LevelActions } from '../LevelActions';
import type { ClientInChannel, ConnectionInfo, DeviceInChannel, UserInChannel } from '../types';
import { ConnectionDetail } from './ConnectionDetail';

interface ChannelData {
  users: UserInChannel[];
  devices: DeviceInChannel[];
  clients: ClientInChannel[];
  connections: ConnectionInfo[];
}

const userColumns = createColumnHelper<UserInChannel>();
const deviceColumns = createColumnHelper<DeviceInChannel>();
const clientColumns = createColumnHelper<ClientInChannel>();
const connectionColumns = createColumnHelper<ConnectionInfo>();
const yesNo = (value: boolean) => (value ? 'yes' : 'no');

/** One channel: its users, devices, clients and connections with their actions, read every LIVE_POLL_MS. */
export function ChannelView({ applicationId, channelId }: { applicationId: string; channelId: string }) {
  const path = channelPath(applicationId, channelId);
  const [selected, setSelected] = useState<ConnectionInfo>();
  const live = usePolled<ChannelData>(
    async () => {
      const [users, devices, clients, connections] = await Promise.all([
        api<UserInChannel[]>('GET', `${path}/users`),
        api<DeviceInChannel[]>('GET', `${path}/devices`),
        api<ClientInChannel[]>('GET', `${path}/clients`),
        api<ConnectionInfo[]>('GET', `${path}/connections`),
      ]);
      return { users, devices, clients, connections };
    },
    [path],
    LIVE_POLL_MS,
  );
  const refresh = live.refresh;
  // Stable columns: a cell renderer is a component type; a new one each render would remount the actions.
  const userColumnDefs = useMemo(
    () => [
      userColumns.accessor('id', { header: 'User' }),
      userColumns.accessor((row) => row.alias ?? '', { id: 'alias', header: 'Alias' }),
      userColumns.accessor('deviceCount', { header: 'Devices' }),
      userColumns.accessor('clientCount', { header: 'Clients' }),
      userColumns.accessor('connectionCount', { header: 'Connections' }),
      userColumns.display({
        id: 'actions',
        header: 'Actions',
        cell: ({ row }) => (
          <LevelActions
            path={`${path}/users/${seg(row.original.id)}`}
            target={`user ${row.original.id}`}
            onDone={refresh}
          />
        ),
      }),
    ],
    [path, refresh],
  );
  const deviceColumnDefs = useMemo(
    () => [
      deviceColumns.accessor('id', { header: 'Device' }),
      deviceColumns.accessor('userId', { header: 'User' }),
      deviceColumns.accessor('clientCount', { header: 'Clients' }),
      deviceColumns.accessor('connectionCount', { header: 'Connections' }),
      deviceColumns.display({
        id: 'actions',
        header: 'Actions',
        cell: ({ row }) => (
          <LevelActions
            path={`${path}/users/${seg(row.original.userId)}/devices/${seg(row.original.id)}`}
            target={`device ${row.original.id}`}
            onDone={refresh}
          />
        ),
      }),
    ],
    [path, refresh],
  );
  const clientColumnDefs = useMemo(
    () => [
      clientColumns.accessor('id', { header: 'Client' }),
      clientColumns.accessor('userId', { header: 'User' }),
      clientColumns.accessor('deviceId', { header: 'Device' }),
      clientColumns.accessor((row) => row.roles.join(', '), { id: 'roles', header: 'Roles' }),
      clientColumns.accessor('connectionCount', { header: 'Connections' }),
      clientColumns.display({
        id: 'actions',
        header: 'Actions',
        cell: ({ row }) => (
          <LevelActions
            path={clientInChannelPath(applicationId, channelId, { ...row.original, clientId: row.original.id })}
            target={`client ${row.original.id}`}
            onDone={refresh}
          />
        ),
      }),
    ],
    [applicationId, channelId, refresh],
  );
  const connectionColumnDefs = useMemo(
    () => [
      connectionColumns.accessor('id', {
        header: 'Connection',
        cell: (info) => (
          <button type="button" className="link" onClick={() => setSelected(info.row.original)}>
            {info.getValue()}
          </button>
        ),
      }),
      connectionColumns.accessor('userId', { header: 'User' }),
      connectionColumns.accessor('clientId', { header: 'Client' }),
      connectionColumns.accessor('type', { header: 'Type' }),
      connectionColumns.accessor('state', { header: 'State' }),
      connectionColumns.accessor((row) => yesNo(row.localAudioMuted), { id: 'audioMuted', header: 'Audio muted' }),
      connectionColumns.accessor((row) => yesNo(row.localVideoMuted), { id: 'videoMuted', header: 'Video muted' }),
      connectionColumns.accessor((row) => yesNo(row.localAudioUnmuteDisabled), {
        id: 'unmuteDisabled',
        header: 'Unmuting disabled',
      }),
      connectionColumns.accessor((row) => yesNo(row.recording), { id: 'recording', header: 'Recording' }),
      connectionColumns.display({
        id: 'actions',
        header: 'Actions',
        cell: ({ row }) => (
          <LevelActions
            path={`${clientInChannelPath(applicationId, channelId, row.original)}/connections/${seg(row.original.id)}`}
            target={`connection ${row.original.id}`}
            messages={false}
            onDone={refresh}
          />
        ),
      }),
    ],
    [applicationId, channelId, refresh],
  );
  const current =
    selected && live.data?.connections.find((c) => c.id === selected.id && c.clientId === selected.clientId);
  return (
    <section aria-labelledby="channel-title">
      <h3 id="channel-title">Channel {channelId}</h3>
      <LevelActions path={path} target={`channel ${channelId}`} onDone={refresh} />
      {live.error && <p role="alert">{live.error}</p>}
      <DataTable caption="Users" rows={live.data?.users ?? []} rowId={(row) => row.id} columns={userColumnDefs} />
      <DataTable
        caption="Devices"
        rows={live.data?.devices ?? []}
        rowId={(row) => `${row.userId}/${row.id}`}
        columns={deviceColumnDefs}
      />
      <DataTable
        caption="Clients"
        rows={live.data?.clients ?? []}
        rowId={(row) => `${row.userId}/${row.deviceId}/${row.id}`}
        searchLabel="Search clients"
        columns={clientColumnDefs}
      />
      <DataTable
        caption="Connections"
        rows={live.data?.connections ?? []}
        rowId={(row) => `${row.clientId}/${row.id}`}
        searchLabel="Search connections"
        columns={connectionColumnDefs}
      />
      {current && <ConnectionDetail connection={current} onClose={() => setSelected(undefined)} />}
    </section>
  );
}
