import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { Action } from '../Action';
import { api, channelPath, seg } from '../api';
import { DataTable } from '../DataTable';
import { loadApplicationIds, usePolled } from '../hooks';
import type { ChannelRecording } from '../types';

interface Filters {
  applicationId: string;
  channelId: string;
  /** `datetime-local` values (local time), empty: no bound. */
  from: string;
  to: string;
}

/** The interface A list path and query of the filters (timestamps in Unix seconds, newest first). */
export function recordingsQuery(filters: Filters): string {
  const base = filters.channelId
    ? `${channelPath(filters.applicationId, filters.channelId)}/recordings`
    : `/api/a/applications/${seg(filters.applicationId)}/recordings`;
  const query = new URLSearchParams({ take: '200' });
  const seconds = (local: string) => String(Math.floor(new Date(local).getTime() / 1000));
  if (filters.from) query.set('timestampMin', seconds(filters.from));
  if (filters.to) query.set('timestampMax', seconds(filters.to));
  return `${base}?${query.toString()}`;
}

/**
 * A signed recording link of recording-service as this origin serves it (`/recordings/files/<token>`):
 * the player and the download stay on the console's origin (CSP `media-src 'self'`), no credential in it.
 */
export function playablePath(signedUrl: string | null): string | null {
  if (!signedUrl) return null;
  const token = new URL(signedUrl).pathname.split('/files/').at(-1);
  return token ? `/recordings/files/${token}` : null;
}

const state = (recording: ChannelRecording) =>
  recording.deleted
    ? 'deleted'
    : recording.stopTimestamp === null
      ? 'recording'
      : recording.ready
        ? 'ready'
        : 'processing';
const columns = createColumnHelper<ChannelRecording>();

function Player({ recording, onClose }: { recording: ChannelRecording; onClose: () => void }) {
  const channelFile = playablePath(recording.url);
  return (
    <section aria-labelledby="player-title" className="detail">
      <h3 id="player-title">Recording {recording.id}</h3>
      <button type="button" onClick={onClose}>
        Close player
      </button>
      {channelFile && (
        <figure>
          <figcaption>Channel {recording.channelId} (muxed)</figcaption>
          <video controls preload="metadata" src={channelFile} aria-label={`Channel recording ${recording.id}`} />
        </figure>
      )}
      {recording.connectionRecordings.map((connection) => {
        const audio = playablePath(connection.audioUrl);
        const video = playablePath(connection.videoUrl);
        const name = `connection ${connection.connectionId} of ${connection.userId}`;
        return (
          <figure key={connection.id}>
            <figcaption>
              Connection {connection.connectionId} ({connection.userId})
            </figcaption>
            {audio && <audio controls preload="metadata" src={audio} aria-label={`Audio of ${name}`} />}
            {video && <video controls preload="metadata" src={video} aria-label={`Video of ${name}`} />}
          </figure>
        );
      })}
    </section>
  );
}

/** Channel recordings of an application (or one channel): filter, play, download, change expiry, delete. */
export function RecordingsPage() {
  const applicationIds = usePolled(loadApplicationIds, []).data ?? [];
  const [filters, setFilters] = useState<Filters>({ applicationId: '', channelId: '', from: '', to: '' });
  const [playing, setPlaying] = useState<ChannelRecording>();
  const applicationId = filters.applicationId || applicationIds[0] || '';
  const query = applicationId ? recordingsQuery({ ...filters, applicationId }) : '';
  const list = usePolled(() => (query ? api<ChannelRecording[]>('GET', query) : Promise.resolve([])), [query]);
  const set = <K extends keyof Filters>(field: K, value: Filters[K]) => setFilters((f) => ({ ...f, [field]: value }));
  const refresh = list.refresh;
  const columnDefs = useMemo(
    () => [
      columns.accessor('channelId', { header: 'Channel' }),
      columns.accessor((row) => row.tag ?? '', { id: 'tag', header: 'Tag' }),
      columns.accessor('startTimestamp', { header: 'Started' }),
      columns.accessor((row) => row.stopTimestamp ?? '—', { id: 'stop', header: 'Stopped' }),
      columns.accessor((row) => row.expiryTimestamp ?? 'never', { id: 'expiry', header: 'Expires' }),
      columns.accessor(state, { id: 'state', header: 'State' }),
      columns.accessor((row) => row.connectionRecordings.length, { id: 'connections', header: 'Connections' }),
      columns.display({
        id: 'actions',
        header: 'Actions',
        cell: ({ row }) => {
          const recording = row.original;
          const path = `${channelPath(recording.applicationId, recording.channelId)}/recordings/${seg(recording.id)}`;
          const file = playablePath(recording.url);
          if (recording.deleted) return null;
          return (
            <div className="actions" role="group" aria-label={`Actions on recording ${recording.id}`}>
              <button type="button" onClick={() => setPlaying(recording)}>
                Play
              </button>
              {file && (
                <a className="button" href={file} download={`${recording.channelId}-${recording.id}.webm`}>
                  Download
                </a>
              )}
              <Action
                label="Change expiry"
                question={`New expiry of recording ${recording.id}:`}
                input={{ label: 'Expires on', type: 'datetime-local' }}
                run={(local) => api('PATCH', path, { expiryTimestamp: new Date(local).toISOString() })}
                onDone={refresh}
              />
              <Action
                label="Delete"
                danger
                question={`Delete recording ${recording.id} and its files?`}
                run={() => api('DELETE', path)}
                onDone={refresh}
              />
            </div>
          );
        },
      }),
    ],
    [refresh],
  );
  return (
    <section aria-labelledby="recordings-title">
      <h2 id="recordings-title">Recordings</h2>
      <form className="filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          Application
          <select value={applicationId} onChange={(event) => set('applicationId', event.target.value)}>
            {applicationIds.map((id) => (
              <option key={id} value={id}>
                {id}
              </option>
            ))}
          </select>
        </label>
        <label>
          Channel
          <input value={filters.channelId} onChange={(event) => set('channelId', event.target.value)} />
        </label>
        <label>
          Started from
          <input type="datetime-local" value={filters.from} onChange={(event) => set('from', event.target.value)} />
        </label>
        <label>
          Started until
          <input type="datetime-local" value={filters.to} onChange={(event) => set('to', event.target.value)} />
        </label>
        <button type="button" onClick={refresh}>
          Refresh
        </button>
      </form>
      {list.error && <p role="alert">{list.error}</p>}
      <DataTable caption="Channel recordings" rows={list.data ?? []} rowId={(row) => row.id} columns={columnDefs} />
      {playing && <Player key={playing.id} recording={playing} onClose={() => setPlaying(undefined)} />}
    </section>
  );
}
