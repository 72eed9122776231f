import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { Action } from '../Action';
import { api, seg } from '../api';
import { DataTable } from '../DataTable';
import { usePolled } from '../hooks';
import type { ApiKey, ODataList, Organization } from '../types';

/** A new secret, shown this once (the API keeps only its hash). */
function Secret({ label, secret }: { label: string; secret: string }) {
  return (
    <div role="status" className="secret">
      <p>
        {label}: <code>{secret}</code>
      </p>
      <p>Copy it now: it is not shown again.</p>
    </div>
  );
}

function CreateForm({ label, field, create }: { label: string; field: string; create: (v: string) => Promise<void> }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState<string>();
  return (
    <form
      aria-label={label}
      className="filters"
      onSubmit={(event) => {
        event.preventDefault();
        create(value).then(
          () => {
            setValue('');
            setError(undefined);
          },
          (failure: unknown) => setError(failure instanceof Error ? failure.message : String(failure)),
        );
      }}
    >
      <label>
        {field}
        <input required value={value} onChange={(event) => setValue(event.target.value)} />
      </label>
      <button type="submit">{label}</button>
      {error && <p role="alert">{error}</p>}
    </form>
  );
}

const organizationColumns = createColumnHelper<Organization>();
const keyColumns = createColumnHelper<ApiKey>();
/** The API keys' columns; `onChange` reads the keys again after a disable or enable. */
function keyColumnDefs(onChange: () => void) {
  return [
    keyColumns.accessor((row) => row.tag ?? '', { id: 'tag', header: 'Name' }),
    keyColumns.accessor('id', { header: 'Id' }),
    keyColumns.accessor((row) => new Date(row.createdOn).toISOString(), { id: 'createdOn', header: 'Created' }),
    keyColumns.accessor((row) => (row.disabled ? 'disabled' : 'enabled'), { id: 'state', header: 'State' }),
    keyColumns.display({
      id: 'actions',
      header: 'Actions',
      cell: ({ row }) => (
        <Action
          label={row.original.disabled ? 'Enable' : 'Disable'}
          danger={!row.original.disabled}
          question={
            row.original.disabled
              ? `Enable API key ${row.original.tag ?? row.original.id} again?`
              : `Disable API key ${row.original.tag ?? row.original.id}? It is refused on both interfaces.`
          }
          run={() => api('PATCH', `/api/b/ApiKeys/${seg(row.original.id)}`, { disabled: !row.original.disabled })}
          onDone={onChange}
        />
      ),
    }),
  ];
}

/** Operators: organizations (create with their first key, disable, enable) and their own organization's API keys. */
export function OrganizationsPage() {
  const organizations = usePolled(() => api<ODataList<Organization>>('GET', '/api/b/Organizations?$top=1000'), []);
  const keys = usePolled(() => api<ODataList<ApiKey>>('GET', '/api/b/ApiKeys?$top=1000'), []);
  const [secret, setSecret] = useState<{ label: string; value: string }>();
  const refresh = organizations.refresh;
  const keyColumnsWithActions = useMemo(() => keyColumnDefs(keys.refresh), [keys.refresh]);
  const columnDefs = useMemo(
    () => [
      organizationColumns.accessor((row) => row.name ?? '', { id: 'name', header: 'Name' }),
      organizationColumns.accessor('id', { header: 'Id' }),
      organizationColumns.accessor((row) => (row.disabled ? 'disabled' : 'enabled'), { id: 'state', header: 'State' }),
      organizationColumns.display({
        id: 'actions',
        header: 'Actions',
        cell: ({ row }) => (
          <Action
            label={row.original.disabled ? 'Enable' : 'Disable'}
            danger={!row.original.disabled}
            question={
              row.original.disabled
                ? `Enable organization ${row.original.name ?? row.original.id} and its keys again?`
                : `Disable organization ${row.original.name ?? row.original.id}? Its API keys and tokens are refused.`
            }
            run={() =>
              api('PATCH', `/api/b/Organizations/${seg(row.original.id)}`, { disabled: !row.original.disabled })
            }
            onDone={refresh}
          />
        ),
      }),
    ],
    [refresh],
  );
  return (
    <section aria-labelledby="organizations-title">
      <h2 id="organizations-title">Organizations and API keys</h2>
      {secret && <Secret label={secret.label} secret={secret.value} />}
      {organizations.error && <p role="alert">{organizations.error}</p>}
      <DataTable
        caption="Organizations"
        rows={organizations.data?.value ?? []}
        rowId={(row) => row.id}
        searchLabel="Search organizations"
        columns={columnDefs}
      />
      <CreateForm
        label="Create organization"
        field="Organization name"
        create={async (name) => {
          const created = await api<Organization & { apiKey: ApiKey }>('POST', '/api/b/Organizations', { name });
          setSecret({ label: `API key of ${name}`, value: created.apiKey.key ?? '' });
          refresh();
        }}
      />
      <h3>API keys of this organization</h3>
      <p>A disabled key is refused like an unknown one; a key cannot disable itself.</p>
      {keys.error && <p role="alert">{keys.error}</p>}
      <DataTable
        caption="API keys"
        rows={keys.data?.value ?? []}
        rowId={(row) => row.id}
        columns={keyColumnsWithActions}
      />
      <CreateForm
        label="Create API key"
        field="Key name"
        create={async (tag) => {
          const created = await api<ApiKey>('POST', '/api/b/ApiKeys', { tag });
          setSecret({ label: `API key ${tag}`, value: created.key ?? '' });
          keys.refresh();
        }}
      />
    </section>
  );
}
