import { createColumnHelper, type ColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { api, seg } from '../api';
import { DataTable } from '../DataTable';
import { LIVE_POLL_MS, usePolled } from '../hooks';
import type { ApplicationSnapshot, ChannelSnapshot } from '../types';
import { ChannelView } from './Channel';

async function loadApplications(): Promise<ApplicationSnapshot[]> {
  const ids = await api<string[]>('GET', '/api/a/applications');
  return Promise.all(ids.map((id) => api<ApplicationSnapshot>('GET', `/api/a/applications/${seg(id)}`)));
}

const appColumns = createColumnHelper<ApplicationSnapshot>();
const channelColumns = createColumnHelper<ChannelSnapshot>();
const counts = <Row extends Omit<ChannelSnapshot, 'id'>>(helper: ColumnHelper<Row>) => [
  helper.accessor((row) => row.userCount, { id: 'users', header: 'Users' }),
  helper.accessor((row) => row.deviceCount, { id: 'devices', header: 'Devices' }),
  helper.accessor((row) => row.clientCount, { id: 'clients', header: 'Clients' }),
  helper.accessor((row) => row.connectionCount, { id: 'connections', header: 'Connections' }),
];

function open(label: string, onClick: () => void) {
  return (
    <button type="button" className="link" onClick={onClick}>
      {label}
    </button>
  );
}

/** Live: applications → channels → users, devices, clients → connections, read again every LIVE_POLL_MS. */
export function LivePage() {
  const [applicationId, setApplicationId] = useState<string>();
  const [channelId, setChannelId] = useState<string>();
  const applications = usePolled(loadApplications, [], LIVE_POLL_MS);
  const channels = usePolled(
    () =>
      applicationId
        ? api<ChannelSnapshot[]>('GET', `/api/a/applications/${seg(applicationId)}/channels`)
        : Promise.resolve([]),
    [applicationId],
    LIVE_POLL_MS,
  );
  // Stable columns: a cell renderer is a component type, a new one each render would remount the cells.
  const applicationColumnDefs = useMemo(
    () => [
      appColumns.accessor('id', {
        header: 'Application',
        cell: (info) =>
          open(info.getValue(), () => {
            setApplicationId(info.getValue());
            setChannelId(undefined);
          }),
      }),
      appColumns.accessor('channelCount', { header: 'Channels' }),
      ...counts(appColumns),
    ],
    [],
  );
  const channelColumnDefs = useMemo(
    () => [
      channelColumns.accessor('id', {
        header: 'Channel',
        cell: (info) => open(info.getValue(), () => setChannelId(info.getValue())),
      }),
      ...counts(channelColumns),
    ],
    [],
  );
  return (
    <section aria-labelledby="live-title">
      <h2 id="live-title">Live</h2>
      {applications.error && <p role="alert">{applications.error}</p>}
      <DataTable
        caption="Applications"
        rows={applications.data ?? []}
        rowId={(row) => row.id}
        searchLabel="Search applications"
        columns={applicationColumnDefs}
      />
      {applicationId && (
        <section aria-labelledby="channels-title">
          <h3 id="channels-title">Channels of {applicationId}</h3>
          {channels.error && <p role="alert">{channels.error}</p>}
          <DataTable
            caption="Channels"
            rows={channels.data ?? []}
            rowId={(row) => row.id}
            searchLabel="Search channels"
            columns={channelColumnDefs}
          />
        </section>
      )}
      {applicationId && channelId && (
        <ChannelView key={`${applicationId}/${channelId}`} applicationId={applicationId} channelId={channelId} />
      )}
    </section>
  );
}
