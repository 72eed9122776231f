import { createColumnHelper } from '@tanstack/react-table';
import { useMemo } from 'react';
import { Action } from '../Action';
import { api, seg } from '../api';
import { DataTable } from '../DataTable';
import { LIVE_POLL_MS, usePolled } from '../hooks';
import type { MediaServer, MediaServerStatistics } from '../types';

interface Row extends MediaServer {
  stats: MediaServerStatistics | undefined;
}

async function loadServers(): Promise<Row[]> {
  const [servers, stats] = await Promise.all([
    api<MediaServer[]>('GET', '/api/a/mediaservers'),
    api<MediaServerStatistics[]>('GET', '/api/a/mediaservers/stats'),
  ]);
  return servers.map((server) => ({ ...server, stats: stats.find((s) => s.mediaServerId === server.id) }));
}

const columns = createColumnHelper<Row>();
const count = (value: number | undefined) => (value === undefined ? '—' : String(value));

/** Media servers (operator credential only): load, statistics, enable and disable. */
export function MediaServersPage() {
  const servers = usePolled(loadServers, [], LIVE_POLL_MS);
  const refresh = servers.refresh;
  // Stable columns: a cell renderer is a component type; a new one each render would remount the dialog.
  const columnDefs = useMemo(
    () => [
      columns.accessor('id', { header: 'Media server' }),
      columns.accessor((row) => row.computer.hostName, { id: 'host', header: 'Host' }),
      columns.accessor((row) => row.computer.region ?? '—', { id: 'region', header: 'Region' }),
      columns.accessor((row) => (row.active ? 'enabled' : 'disabled'), { id: 'active', header: 'State' }),
      columns.accessor((row) => count(row.stats?.activeConnections), { id: 'activeConnections', header: 'Active' }),
      columns.accessor((row) => count(row.stats?.pendingConnections), { id: 'pending', header: 'Pending' }),
      columns.accessor((row) => count(row.stats?.totalFailedConnections), { id: 'failed', header: 'Failed' }),
      columns.display({
        id: 'toggle',
        header: 'Action',
        cell: ({ row }) => {
          const enable = !row.original.active;
          return (
            <Action
              label={enable ? 'Enable' : 'Disable'}
              danger={!enable}
              question={`${enable ? 'Enable' : 'Disable'} media server ${row.original.computer.hostName}?`}
              run={() => api('PATCH', `/api/a/mediaservers/${seg(row.original.id)}`, { active: enable })}
              onDone={refresh}
            />
          );
        },
      }),
    ],
    [refresh],
  );
  return (
    <section aria-labelledby="media-title">
      <h2 id="media-title">Media servers</h2>
      {servers.error && <p role="alert">{servers.error}</p>}
      <DataTable caption="Media servers" rows={servers.data ?? []} rowId={(row) => row.id} columns={columnDefs} />
    </section>
  );
}
