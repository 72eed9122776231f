import type { ConnectionInfo } from '../types';

/** Every field of a connection as last reported; nested values shown as JSON text. */
export function ConnectionDetail({ connection, onClose }: { connection: ConnectionInfo; onClose: () => void }) {
  const shown = (value: unknown) => {
    if (value === null || value === undefined) return '—';
    return typeof value === 'string' ? value : JSON.stringify(value);
  };
  return (
    <section aria-labelledby="connection-title" className="detail">
      <h4 id="connection-title">Connection {connection.id}</h4>
      <button type="button" onClick={onClose}>
        Close connection detail
      </button>
      <dl>
        {Object.entries(connection).map(([field, value]) => (
          <div key={field}>
            <dt>{field}</dt>
            <dd>{shown(value)}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
