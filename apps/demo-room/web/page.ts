import { Client, DownstreamConnection, SyncError, UpstreamConnection, type Connection } from '@switchboard/client';
import { element, LocalTile, RemoteTile } from './tiles.js';

/** What the backend answers to `POST /api/token`. */
interface IssuedToken {
  token: string;
  clientId: string;
  name: string;
  room: string;
  syncUrl: string;
}

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const tiles = new Map<string, RemoteTile>(); // by downstream connection id

function setStatus(text: string): void {
  byId('status').textContent = text;
}

function logLine(listId: 'chat-log' | 'operator-log', text: string, who?: string): void {
  const item = element('li');
  if (who !== undefined) item.append(element('strong', undefined, `${who}: `));
  item.append(document.createTextNode(text));
  const list = byId<HTMLUListElement>(listId);
  list.append(item);
  list.scrollTop = list.scrollHeight;
}

async function requestToken(body: { name: string; room: string; clientId?: string }): Promise<IssuedToken> {
  const response = await fetch('/api/token', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as IssuedToken & { detail?: string };
  if (!response.ok) throw new Error(answer.detail ?? `the token request failed (HTTP ${response.status})`);
  return answer;
}

function showDownstream(connection: DownstreamConnection): void {
  const remote = connection.remote;
  const name = 'userAlias' in remote ? (remote.userAlias ?? remote.userId ?? '?') : remote.connectionId;
  const tile = new RemoteTile(connection, name);
  tiles.set(connection.connectionId, tile);
  byId('tiles').append(tile.root);
  // The remote left, was kicked, or our session ended: its tile goes.
  connection.on('ended', () => {
    tile.remove();
    tiles.delete(connection.connectionId);
  });
}

/** The upstream publishing the camera and microphone (a new one after the SDK restored the session). */
let publishing: UpstreamConnection | undefined;

function controlLabels(): void {
  const muted = publishing?.muted ?? { audio: false, video: false };
  byId('toggle-audio').textContent = muted.audio ? 'Unmute microphone' : 'Mute microphone';
  byId('toggle-video').textContent = muted.video ? 'Turn camera on' : 'Turn camera off';
}

/** The mute buttons: an unmute the operator disabled is refused by the SDK (`UnmuteDisabled`), said here. */
function followControls(): void {
  for (const kind of ['audio', 'video'] as const) {
    byId(`toggle-${kind}`).addEventListener('click', () => {
      if (!publishing) return;
      publishing.setMuted(kind, !publishing.muted[kind]).then(controlLabels, (error: Error) => {
        const device = kind === 'audio' ? 'microphone' : 'camera';
        const refused = error instanceof SyncError && error.code === 'UnmuteDisabled';
        logLine('operator-log', refused ? `The operator does not let you unmute your ${device}.` : error.message);
      });
    });
  }
}

function followUpstream(upstream: UpstreamConnection, local: LocalTile): void {
  publishing = upstream;
  controlLabels();
  upstream.on('mute', ({ kind, muted, byServer, unmuteDisabled }) => {
    controlLabels();
    const how = !muted
      ? ''
      : byServer
        ? `muted by the operator${unmuteDisabled ? ' (unmuting disabled)' : ''}`
        : 'muted';
    local.setMuted(kind, how);
    if (byServer) {
      const device = kind === 'audio' ? 'microphone' : 'camera';
      logLine(
        'operator-log',
        muted
          ? `The operator muted your ${device}${unmuteDisabled ? ' and disabled unmuting' : ''}.`
          : `The operator unmuted your ${device}.`,
      );
    }
  });
}

/** Removed by the operator: say why, stop the camera and the session. */
let wasRemoved = false;
function removed(client: Client, stream: MediaStream, why: string): void {
  if (wasRemoved) return; // a kick may be followed by the end of the session
  wasRemoved = true;
  for (const track of stream.getTracks()) track.stop();
  for (const tile of tiles.values()) tile.remove();
  tiles.clear();
  const notice = element('p', 'removed', `Removed by the operator: ${why}`);
  notice.id = 'removed';
  byId('tiles').replaceChildren(notice);
  logLine('operator-log', `Removed by the operator: ${why}`);
  setStatus('Removed from the room.');
  for (const id of ['chat-input', 'toggle-audio', 'toggle-video']) byId<HTMLButtonElement>(id).disabled = true;
  client.unregister().catch(() => client.close());
}

async function join(name: string, room: string): Promise<void> {
  let issued = await requestToken({ name, room });
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: { width: 640, height: 480 } });
  const local = new LocalTile(stream, name);
  byId('tiles').append(local.root);
  const client = new Client({
    url: issued.syncUrl,
    userAlias: name,
    autoSubscribe: true,
    statsIntervalMs: 5000,
    getToken: async () => (issued = await requestToken({ name, room, clientId: issued.clientId })).token,
  });
  (window as unknown as { demoRoom: object }).demoRoom = { client, room };
  client.on('connection', (connection: Connection) => {
    if (connection instanceof DownstreamConnection) showDownstream(connection);
    else if (connection instanceof UpstreamConnection) followUpstream(connection, local);
  });
  client.on('message', ({ message, from }) => {
    const text = message.message ?? '';
    if (from.clientId === null) logLine('operator-log', text, 'Message from the operator');
    else logLine('chat-log', text, from.userAlias ?? from.userId ?? 'someone');
  });
  client.on('kicked', ({ channelId, connectionId }) => {
    if (channelId === room && !connectionId) removed(client, stream, `kicked out of the room "${room}".`);
  });
  client.on('unregistered', ({ reason }) => removed(client, stream, reason ?? 'the session was ended.'));
  client.on('disconnected', () => setStatus('Connection lost: reconnecting…'));
  client.on('reconnected', ({ resumed }) =>
    setStatus(`${resumed ? 'Session resumed' : 'Session restored'}: ${name} in room ${room}.`),
  );
  client.on('closed', ({ reason }) => {
    if (!wasRemoved) setStatus(`Disconnected${reason ? `: ${reason}` : ''}.`);
  });

  try {
    await client.register(issued.token);
    await client.join(room);
    const upstream = await client.publish(room, {
      audio: stream.getAudioTracks()[0],
      video: stream.getVideoTracks()[0],
    });
    followUpstream(upstream, local);
  } catch (error) {
    for (const track of stream.getTracks()) track.stop();
    local.root.remove();
    client.close();
    throw error;
  }
  followControls();
  setStatus(`Connected: ${name} in room ${room}.`);

  byId<HTMLFormElement>('chat-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const input = byId<HTMLInputElement>('chat-input');
    const text = input.value.trim();
    if (!text) return;
    input.value = '';
    client.sendMessage(room, text).then(
      () => logLine('chat-log', text, `${name} (you)`),
      (error: Error) => logLine('chat-log', `not sent: ${error.message}`),
    );
  });
}

function start(name: string, room: string): void {
  byId('join-form').hidden = true;
  byId('room-view').hidden = false;
  setStatus('Joining…');
  join(name, room).catch((error: Error) => {
    byId('join-form').hidden = false;
    byId('room-view').hidden = true;
    byId('form-error').textContent = error.message;
    setStatus('Not connected.');
  });
}

const query = new URLSearchParams(location.search);
const [queryName, queryRoom] = [query.get('name'), query.get('room')];
byId<HTMLInputElement>('name').value = queryName ?? '';
byId<HTMLInputElement>('room').value = queryRoom ?? '';
byId<HTMLFormElement>('join-form').addEventListener('submit', (event) => {
  event.preventDefault();
  start(byId<HTMLInputElement>('name').value, byId<HTMLInputElement>('room').value);
});
if (queryName && queryRoom) start(queryName, queryRoom);
