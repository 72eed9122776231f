import { createColumnHelper } from '@tanstack/react-table';
import { useState } from 'react';
import { api, odataString } from '../api';
import { DataTable } from '../DataTable';
import { usePolled } from '../hooks';
import type { ChangeRecord, ODataList } from '../types';

interface Filters {
  entityType: string;
  entityId: string;
  type: '' | ChangeRecord['type'];
}

/** The OData query of the change log for the filters (newest first, one page). */
function changesQuery(filters: Filters): string {
  const clauses: string[] = [];
  if (filters.entityType) clauses.push(`entityType eq ${odataString(filters.entityType)}`);
  if (filters.entityId) clauses.push(`entityId eq ${odataString(filters.entityId)}`);
  if (filters.type) clauses.push(`type eq ${odataString(filters.type)}`);
  const query = new URLSearchParams({ $orderby: 'changedOn desc', $top: '200' });
  if (clauses.length > 0) query.set('$filter', clauses.join(' and '));
  return query.toString();
}

const columns = createColumnHelper<ChangeRecord>();
const COLUMNS = [
  columns.accessor((row) => new Date(row.changedOn).toISOString(), { id: 'changedOn', header: 'Changed' }),
  columns.accessor('type', { header: 'Change' }),
  columns.accessor('entityType', { header: 'Entity' }),
  columns.accessor('entityId', { header: 'Id' }),
  columns.accessor('propertyName', { header: 'Property' }),
  columns.accessor((row) => row.oldValue ?? '—', { id: 'oldValue', header: 'Old value' }),
  columns.accessor((row) => row.newValue ?? '—', { id: 'newValue', header: 'New value' }),
  columns.accessor('changedBy', { header: 'By' }),
];

/** The change log of the credential's organization (interface B `/ChangeRecords`), filterable. */
export function ChangeLogPage() {
  const [filters, setFilters] = useState<Filters>({ entityType: '', entityId: '', type: '' });
  const query = changesQuery(filters);
  const log = usePolled(() => api<ODataList<ChangeRecord>>('GET', `/api/b/ChangeRecords?${query}`), [query]);
  const set = <K extends keyof Filters>(field: K, value: Filters[K]) => setFilters((f) => ({ ...f, [field]: value }));
  return (
    <section aria-labelledby="changes-title">
      <h2 id="changes-title">Change log</h2>
      <form className="filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          Entity type
          <input value={filters.entityType} onChange={(event) => set('entityType', event.target.value)} />
        </label>
        <label>
          Entity id
          <input value={filters.entityId} onChange={(event) => set('entityId', event.target.value)} />
        </label>
        <label>
          Change
          <select value={filters.type} onChange={(event) => set('type', event.target.value as Filters['type'])}>
            <option value="">any</option>
            <option value="Create">Create</option>
            <option value="Update">Update</option>
            <option value="Delete">Delete</option>
          </select>
        </label>
      </form>
      {log.error && <p role="alert">{log.error}</p>}
      <DataTable caption="Changes" rows={log.data?.value ?? []} rowId={(row) => row.id} columns={COLUMNS} />
    </section>
  );
}
