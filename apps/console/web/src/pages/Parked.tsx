import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { Action } from '../Action';
import { api, seg } from '../api';
import { DataTable } from '../DataTable';
import { usePolled } from '../hooks';
import type { ODataList, ParkedEvent } from '../types';

const columns = createColumnHelper<ParkedEvent>();

/** Events the durable consumers parked (operator credential only), with replay. */
export function ParkedPage() {
  const [showReplayed, setShowReplayed] = useState(false);
  const query = new URLSearchParams({ $orderby: 'parkedOn desc', $top: '200' });
  if (!showReplayed) query.set('$filter', "status eq 'Parked'");
  const parked = usePolled(
    () => api<ODataList<ParkedEvent>>('GET', `/api/b/ParkedEvents?${query.toString()}`),
    [showReplayed],
  );
  const refresh = parked.refresh;
  // Stable columns: a cell renderer is a component type, a new one each render would remount the replay dialog.
  const columnDefs = useMemo(
    () => [
      columns.accessor((row) => new Date(row.parkedOn).toISOString(), { id: 'parkedOn', header: 'Parked' }),
      columns.accessor('consumer', { header: 'Consumer' }),
      columns.accessor('subject', { header: 'Subject' }),
      columns.accessor('attempts', { header: 'Attempts' }),
      columns.accessor('error', { header: 'Error' }),
      columns.accessor('payloadPreview', { header: 'Payload', cell: (info) => <code>{info.getValue()}</code> }),
      columns.accessor('status', { header: 'Status' }),
      columns.display({
        id: 'replay',
        header: 'Replay',
        cell: ({ row }) =>
          row.original.status === 'Parked' ? (
            <Action
              label="Replay"
              question={`Hand the event on ${row.original.subject} to ${row.original.consumer} again?`}
              run={() => api('POST', `/api/b/ParkedEvents/${seg(row.original.id)}/Replay`)}
              onDone={refresh}
            />
          ) : null,
      }),
    ],
    [refresh],
  );
  return (
    <section aria-labelledby="parked-title">
      <h2 id="parked-title">Parked events</h2>
      <label>
        <input type="checkbox" checked={showReplayed} onChange={(event) => setShowReplayed(event.target.checked)} />
        Show replayed events too
      </label>
      {parked.error && <p role="alert">{parked.error}</p>}
      <DataTable
        caption="Parked events"
        rows={parked.data?.value ?? []}
        rowId={(row) => row.id}
        searchLabel="Search parked events"
        columns={columnDefs}
      />
    </section>
  );
}
