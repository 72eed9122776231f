import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { Action } from '../Action';
import { api, seg } from '../api';
import { DataTable } from '../DataTable';
import { usePolled } from '../hooks';
import type { ApplicationConfig, ChannelConfig, ODataList, Webhook } from '../types';

type EntitySet = 'ApplicationWebhooks' | 'ChannelWebhooks';
const PARENT_FIELD = { ApplicationWebhooks: 'applicationConfigId', ChannelWebhooks: 'channelConfigId' } as const;

interface Draft {
  name: string;
  url: string;
  events: string;
  reliable: boolean;
  batch: boolean;
}
const EMPTY: Draft = { name: '', url: '', events: '', reliable: false, batch: false };

/** The body of a create or edit: events as a list (empty: every event). */
function webhookBody(draft: Draft) {
  const events = draft.events
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  return { name: draft.name, url: draft.url, events, reliable: draft.reliable, batch: draft.batch };
}

function WebhookForm({
  title,
  initial,
  onSave,
}: {
  title: string;
  initial: Draft;
  onSave: (d: Draft) => Promise<unknown>;
}) {
  const [draft, setDraft] = useState(initial);
  const [error, setError] = useState<string>();
  const set = <K extends keyof Draft>(field: K, value: Draft[K]) => setDraft((d) => ({ ...d, [field]: value }));
  return (
    <form
      aria-label={title}
      className="webhook-form"
      onSubmit={(event) => {
        event.preventDefault();
        onSave(draft).then(
          () => {
            setDraft(EMPTY);
            setError(undefined);
          },
          (failure: unknown) => setError(failure instanceof Error ? failure.message : String(failure)),
        );
      }}
    >
      <label>
        Name
        <input required value={draft.name} onChange={(event) => set('name', event.target.value)} />
      </label>
      <label>
        URL
        <input type="url" required value={draft.url} onChange={(event) => set('url', event.target.value)} />
      </label>
      <label>
        Events (comma separated, empty: all)
        <input value={draft.events} onChange={(event) => set('events', event.target.value)} />
      </label>
      <label>
        <input type="checkbox" checked={draft.reliable} onChange={(event) => set('reliable', event.target.checked)} />
        Reliable
      </label>
      <label>
        <input type="checkbox" checked={draft.batch} onChange={(event) => set('batch', event.target.checked)} />
        Batch
      </label>
      <button type="submit">Save</button>
      {error && <p role="alert">{error}</p>}
    </form>
  );
}

const columns = createColumnHelper<Webhook>();

/** The webhooks of one application or channel config: list, create, edit, disable or enable. */
function WebhookList({ entitySet, parentId, label }: { entitySet: EntitySet; parentId: string; label: string }) {
  const parentField = PARENT_FIELD[entitySet];
  const list = usePolled(
    () => api<ODataList<Webhook>>('GET', `/api/b/${entitySet}?${parentField}=${encodeURIComponent(parentId)}`),
    [entitySet, parentId],
  );
  const [editing, setEditing] = useState<Webhook>();
  const refresh = list.refresh;
  const columnDefs = useMemo(
    () => [
      columns.accessor((row) => row.name ?? '', { id: 'name', header: 'Name' }),
      columns.accessor((row) => row.url ?? '', { id: 'url', header: 'URL' }),
      columns.accessor((row) => (row.events?.length ? row.events.join(', ') : 'all'), {
        id: 'events',
        header: 'Events',
      }),
      columns.accessor((row) => (row.disabled ? 'disabled' : 'enabled'), { id: 'state', header: 'State' }),
      columns.accessor((row) => (row.reliable ? 'yes' : 'no'), { id: 'reliable', header: 'Reliable' }),
      columns.display({
        id: 'actions',
        header: 'Actions',
        cell: ({ row }) => (
          <div
            className="actions"
            role="group"
            aria-label={`Actions on webhook ${row.original.name ?? row.original.id}`}
          >
            <button type="button" onClick={() => setEditing(row.original)}>
              Edit
            </button>
            <Action
              label={row.original.disabled ? 'Enable' : 'Disable'}
              question={`${row.original.disabled ? 'Enable' : 'Disable'} webhook ${row.original.name ?? row.original.id}?`}
              danger={!row.original.disabled}
              run={() =>
                api('PATCH', `/api/b/${entitySet}/${seg(row.original.id)}`, { disabled: !row.original.disabled })
              }
              onDone={refresh}
            />
            <Action
              label="Send test event"
              question={`Send a test event (webhook.test) to webhook ${row.original.name ?? row.original.id}? It shows in the delivery log.`}
              run={() => api('POST', `/api/b/${entitySet}/${seg(row.original.id)}/SendTest`)}
            />
            <Action
              label="Delete"
              question={`Delete webhook ${row.original.name ?? row.original.id}? Nothing more is delivered to it; its past deliveries stay in the log.`}
              danger
              run={() => api('DELETE', `/api/b/${entitySet}/${seg(row.original.id)}`)}
              onDone={refresh}
            />
          </div>
        ),
      }),
    ],
    [entitySet, refresh],
  );
  return (
    <section aria-label={label}>
      {list.error && <p role="alert">{list.error}</p>}
      <DataTable caption={label} rows={list.data?.value ?? []} rowId={(row) => row.id} columns={columnDefs} />
      {editing ? (
        <WebhookForm
          key={editing.id}
          title={`Edit webhook ${editing.name ?? editing.id}`}
          initial={{
            name: editing.name ?? '',
            url: editing.url ?? '',
            events: (editing.events ?? []).join(', '),
            reliable: editing.reliable,
            batch: editing.batch,
          }}
          onSave={async (draft) => {
            await api('PATCH', `/api/b/${entitySet}/${seg(editing.id)}`, webhookBody(draft));
            setEditing(undefined);
            refresh();
          }}
        />
      ) : (
        <WebhookForm
          key={`new-${parentId}`}
          title={`New webhook of ${label.toLowerCase()}`}
          initial={EMPTY}
          onSave={async (draft) => {
            await api('POST', `/api/b/${entitySet}`, { ...webhookBody(draft), [parentField]: parentId });
            refresh();
          }}
        />
      )}
    </section>
  );
}

/** Webhooks of application configs and of their channel configs (interface B). */
export function WebhookConfigPage() {
  const configs = usePolled(() => api<ODataList<ApplicationConfig>>('GET', '/api/b/ApplicationConfigs?$top=1000'), []);
  const [chosen, setChosen] = useState('');
  const configId = chosen || configs.data?.value[0]?.id || '';
  const channelConfigs = usePolled(
    () =>
      configId
        ? api<ODataList<ChannelConfig>>(
            'GET',
            `/api/b/ChannelConfigs?applicationConfigId=${encodeURIComponent(configId)}`,
          )
        : Promise.resolve({ value: [] }),
    [configId],
  );
  return (
    <section aria-labelledby="webhook-config-title">
      <h2 id="webhook-config-title">Webhook configuration</h2>
      <p>A test event (type webhook.test) goes to one webhook, even a disabled one, and shows in the delivery log.</p>
      {configs.error && <p role="alert">{configs.error}</p>}
      <label>
        Application config
        <select value={configId} onChange={(event) => setChosen(event.target.value)}>
          {(configs.data?.value ?? []).map((config) => (
            <option key={config.id} value={config.id}>
              {config.applicationId ?? config.id} {config.tag ? `(${config.tag})` : ''}
            </option>
          ))}
        </select>
      </label>
      {configId && (
        <>
          <h3>Application webhooks</h3>
          <WebhookList entitySet="ApplicationWebhooks" parentId={configId} label="Application webhooks" />
          <h3>Channel webhooks</h3>
          {(channelConfigs.data?.value ?? []).length === 0 && <p>This application has no channel configs.</p>}
          {(channelConfigs.data?.value ?? []).map((channelConfig) => (
            <WebhookList
              key={channelConfig.id}
              entitySet="ChannelWebhooks"
              parentId={channelConfig.id}
              label={`Webhooks of channels ${channelConfig.channelIdPattern}`}
            />
          ))}
        </>
      )}
    </section>
  );
}
