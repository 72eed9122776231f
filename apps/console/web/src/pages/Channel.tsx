import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { Action } from '../Action';
import { api, channelPath, clientInChannelPath } from '../api';
import { DataTable } from '../DataTable';
import { LIVE_POLL_MS, usePolled } from '../hooks';
import type { ClientInChannel, ConnectionInfo, UserInChannel } from '../types';
import { ConnectionDetail } from './ConnectionDetail';

interface ChannelData {
  users: UserInChannel[];
  clients: ClientInChannel[];
  connections: ConnectionInfo[];
}

/** The mute, unmute-disabled, kick and message actions of one level (channel or client in channel). */
function LevelActions({ path, target, onDone }: { path: string; target: string; onDone: () => void }) {
  const patch = (body: Record<string, boolean>) => () => api('PATCH', path, body);
  return (
    <div className="actions" role="group" aria-label={`Actions on ${target}`}>
      <Action
        label="Mute audio"
        question={`Mute the audio of ${target}?`}
        run={patch({ audioMuted: true })}
        onDone={onDone}
      />
      <Action
        label="Unmute audio"
        question={`Unmute the audio of ${target}?`}
        run={patch({ audioMuted: false })}
        onDone={onDone}
      />
      <Action
        label="Mute video"
        question={`Mute the video of ${target}?`}
        run={patch({ videoMuted: true })}
        onDone={onDone}
      />
      <Action
        label="Unmute video"
        question={`Unmute the video of ${target}?`}
        run={patch({ videoMuted: false })}
        onDone={onDone}
      />
      <Action
        label="Disable unmuting"
        question={`Stop ${target} from unmuting audio and video?`}
        run={patch({ audioUnmuteDisabled: true, videoUnmuteDisabled: true })}
        onDone={onDone}
      />
      <Action
        label="Allow unmuting"
        question={`Let ${target} unmute audio and video again?`}
        run={patch({ audioUnmuteDisabled: false, videoUnmuteDisabled: false })}
        onDone={onDone}
      />
      <Action
        label="Send message"
        question={`Send a server message to ${target}:`}
        withMessage
        run={(message) => api('POST', `${path}/message`, { message })}
        onDone={onDone}
      />
      <Action label="Kick" danger question={`Kick ${target}?`} run={() => api('DELETE', path)} onDone={onDone} />
    </div>
  );
}

const userColumns = createColumnHelper<UserInChannel>();
const clientColumns = createColumnHelper<ClientInChannel>();
const connectionColumns = createColumnHelper<ConnectionInfo>();
const yesNo = (value: boolean) => (value ? 'yes' : 'no');
const USER_COLUMNS = [
  userColumns.accessor('id', { header: 'User' }),
  userColumns.accessor((row) => row.alias ?? '', { id: 'alias', header: 'Alias' }),
  userColumns.accessor('deviceCount', { header: 'Devices' }),
  userColumns.accessor('clientCount', { header: 'Clients' }),
  userColumns.accessor('connectionCount', { header: 'Connections' }),
];

/** One channel: its users, clients (with their actions) and connections, read again every LIVE_POLL_MS. */
export function ChannelView({ applicationId, channelId }: { applicationId: string; channelId: string }) {
  const path = channelPath(applicationId, channelId);
  const [selected, setSelected] = useState<ConnectionInfo>();
  const live = usePolled<ChannelData>(
    async () => {
      const [users, clients, connections] = await Promise.all([
        api<UserInChannel[]>('GET', `${path}/users`),
        api<ClientInChannel[]>('GET', `${path}/clients`),
        api<ConnectionInfo[]>('GET', `${path}/connections`),
      ]);
      return { users, clients, connections };
    },
    [path],
    LIVE_POLL_MS,
  );
  const refresh = live.refresh;
  // Stable columns: a cell renderer is a component type; a new one each render would remount the actions.
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
    ],
    [],
  );
  const current =
    selected && live.data?.connections.find((c) => c.id === selected.id && c.clientId === selected.clientId);
  return (
    <section aria-labelledby="channel-title">
      <h3 id="channel-title">Channel {channelId}</h3>
      <LevelActions path={path} target={`channel ${channelId}`} onDone={live.refresh} />
      {live.error && <p role="alert">{live.error}</p>}
      <DataTable caption="Users" rows={live.data?.users ?? []} rowId={(row) => row.id} columns={USER_COLUMNS} />
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
