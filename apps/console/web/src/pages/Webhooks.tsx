import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { Action } from '../Action';
import { api, odataString, seg } from '../api';
import { DataTable } from '../DataTable';
import { usePolled } from '../hooks';
import type { ODataList, WebhookDelivery } from '../types';

type Outcome = 'any' | 'failed' | 'succeeded';
interface Filters {
  applicationId: string;
  eventType: string;
  outcome: Outcome;
  finalOnly: boolean;
}

/** The OData query of the delivery log for the filters (newest first, one page). */
export function deliveriesQuery(filters: Filters): string {
  const clauses: string[] = [];
  if (filters.applicationId) clauses.push(`applicationId eq ${odataString(filters.applicationId)}`);
  if (filters.eventType) clauses.push(`eventType eq ${odataString(filters.eventType)}`);
  if (filters.outcome !== 'any') clauses.push(`success eq ${filters.outcome === 'succeeded'}`);
  if (filters.finalOnly) clauses.push('final eq true');
  const query = new URLSearchParams({ $orderby: 'attemptedOn desc', $top: '200' });
  if (clauses.length > 0) query.set('$filter', clauses.join(' and '));
  return query.toString();
}

const columns = createColumnHelper<WebhookDelivery>();

/** The webhook delivery log of the credential's organization, with filters and replay of failed deliveries. */
export function WebhooksPage() {
  const [filters, setFilters] = useState<Filters>({
    applicationId: '',
    eventType: '',
    outcome: 'any',
    finalOnly: false,
  });
  const query = deliveriesQuery(filters);
  const log = usePolled(() => api<ODataList<WebhookDelivery>>('GET', `/api/b/WebhookDeliveries?${query}`), [query]);
  const set = <K extends keyof Filters>(field: K, value: Filters[K]) => setFilters((f) => ({ ...f, [field]: value }));
  const refresh = log.refresh;
  // Stable columns: a cell renderer is a component type, a new one each render would remount the replay dialog.
  const columnDefs = useMemo(
    () => [
      columns.accessor((row) => new Date(row.attemptedOn).toISOString(), {
        id: 'attemptedOn',
        header: 'Attempted',
      }),
      columns.accessor('applicationId', { header: 'Application' }),
      columns.accessor((row) => row.channelId ?? '', { id: 'channelId', header: 'Channel' }),
      columns.accessor('eventType', { header: 'Event' }),
      columns.accessor('url', { header: 'URL' }),
      columns.accessor('attempt', { header: 'Attempt' }),
      columns.accessor((row) => (row.statusCode === null ? '—' : String(row.statusCode)), {
        id: 'status',
        header: 'Status',
      }),
      columns.accessor((row) => (row.success ? 'delivered' : (row.error ?? 'failed')), {
        id: 'outcome',
        header: 'Outcome',
      }),
      columns.display({
        id: 'replay',
        header: 'Replay',
        cell: ({ row }) =>
          !row.original.success && row.original.final ? (
            <Action
              label="Replay"
              question={`Deliver the events of ${row.original.eventType} to ${row.original.url} again?`}
              run={() => api('POST', `/api/b/WebhookDeliveries/${seg(row.original.id)}/Replay`)}
              onDone={refresh}
            />
          ) : null,
      }),
    ],
    [refresh],
  );
  return (
    <section aria-labelledby="webhooks-title">
      <h2 id="webhooks-title">Webhook deliveries</h2>
      <form className="filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          Application
          <input value={filters.applicationId} onChange={(event) => set('applicationId', event.target.value)} />
        </label>
        <label>
          Event type
          <input value={filters.eventType} onChange={(event) => set('eventType', event.target.value)} />
        </label>
        <label>
          Outcome
          <select value={filters.outcome} onChange={(event) => set('outcome', event.target.value as Outcome)}>
            <option value="any">any</option>
            <option value="failed">failed</option>
            <option value="succeeded">succeeded</option>
          </select>
        </label>
        <label>
          <input
            type="checkbox"
            checked={filters.finalOnly}
            onChange={(event) => set('finalOnly', event.target.checked)}
          />
          Last attempts only
        </label>
        <button type="button" onClick={log.refresh}>
          Refresh
        </button>
      </form>
      {log.error && <p role="alert">{log.error}</p>}
      <DataTable
        caption="Delivery attempts"
        rows={log.data?.value ?? []}
        rowId={(row) => row.id}
        columns={columnDefs}
      />
    </section>
  );
}
