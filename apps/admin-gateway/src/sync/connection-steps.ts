import {
  canTransition,
  CONNECTION_TRANSITIONS,
  DomainError,
  isTerminalState,
  type ChannelClaim,
  type EffectiveSettings,
  type StreamDescription,
  type SyncRequestDataOf,
  type SyncStreams,
} from '@switchboard/contracts';
import { randomUUID } from 'node:crypto';
import type { ClientSession, EdgeConnection } from './client-session.js';
import { AWAIT_ANSWERS, NO_SETTINGS, type Step } from './sync-step.js';

// The `/sync` requests about connections (and stats): checked against the session, prepared as Steps.

const sends = (direction: string | undefined) => direction === 'sendrecv' || direction === 'sendonly';

function checkStreams(claim: ChannelClaim, streams: SyncStreams | undefined): void {
  if (!streams) return;
  const refused: Array<{ field: string; message: string }> = [];
  if (claim.disableSendAudio && sends(streams.audio?.direction))
    refused.push({ field: 'streams.audio.direction', message: 'sending audio is disabled by the channel claim' });
  if (claim.disableSendVideo && sends(streams.video?.direction))
    refused.push({ field: 'streams.video.direction', message: 'sending video is disabled by the channel claim' });
  if (claim.disableSendData && sends(streams.data?.direction))
    refused.push({ field: 'streams.data.direction', message: 'sending data is disabled by the channel claim' });
  if (refused.length) throw new DomainError('Forbidden', 'The channel claim does not allow these streams.', refused);
}

export function openConnection(session: ClientSession, data: SyncRequestDataOf<'connection.open'>): Step {
  const claim = joinedClaim(session, data.channelId);
  const disabled = { sfu: claim.disableSfu, mcu: claim.disableMcu, peer: claim.disablePeer }[data.type];
  if (disabled)
    throw new DomainError('Forbidden', `The channel claim does not allow ${data.type} connections.`, [
      { field: 'type', message: 'disabled by the channel claim' },
    ]);
  checkStreams(claim, data.streams);
  const connectionId = data.connectionId ?? randomUUID();
  if (session.connections.has(connectionId))
    throw new DomainError('Conflict', `Connection ${connectionId} exists already.`, [
      { field: 'connectionId', message: 'in use' },
    ]);
  const streams: StreamDescription = {
    audio: data.streams.audio ?? null,
    video: data.streams.video ?? null,
    data: data.streams.data ?? null,
  };
  // Settings null until the registry answers (a request that needs them waits for the answer).
  const connection: EdgeConnection = {
    connectionId,
    channelId: data.channelId,
    type: data.type,
    state: 'new',
    localAudioMuted: data.streams.audio?.muted ?? false,
    localVideoMuted: data.streams.video?.muted ?? false,
    mediaServerId: null,
    remoteConnectionId: data.remoteConnectionId ?? null,
    settings: null,
    settingsVersion: null,
  };
  session.connections.set(connectionId, connection);
  return {
    report: {
      kind: 'connection.open',
      client: session.ref,
      channelId: data.channelId,
      connectionId,
      type: data.type,
      tag: data.tag ?? null,
      streams,
      remoteConnectionId: data.remoteConnectionId ?? null,
    },
    finish: (answer) => {
      // A settings push that arrived before this answer comes from a write the registry applied
      // after the open (it found the connection): newer than the answer's settings, it stays.
      if (connection.settings === null)
        connection.settings = (answer.settings as EffectiveSettings | undefined) ?? NO_SETTINGS;
      const settings = connection.settings;
      connection.mediaServerId = (answer.mediaServerId as string | null | undefined) ?? null;
      // Kicked (the connection or its channel) while the registry answered: the connection is gone
      // already. Not when a request queued after this one closed it or left the channel.
      if (session.kicked.has(connection))
        throw new DomainError('NotJoined', `The client left channel ${data.channelId} meanwhile.`);
      return {
        connectionId,
        channelId: data.channelId,
        state: 'new' as const,
        mediaServerId: connection.mediaServerId,
        settings,
      };
    },
    undo: () => {
      if (session.connections.get(connectionId) === connection) session.connections.delete(connectionId);
    },
  };
}

/** The session's open connection `connectionId`, or `UnknownConnection` (the signalling requests use it too). */
export function connectionOf(session: ClientSession, connectionId: string): EdgeConnection {
  const connection = session.connections.get(connectionId);
  if (!connection)
    throw new DomainError('UnknownConnection', `The client has no open connection ${connectionId}.`, [
      { field: 'connectionId', message: 'unknown' },
    ]);
  return connection;
}

/** Forgets a connection in advance (final state, close); the undo puts it back. */
function forget(session: ClientSession, connection: EdgeConnection): () => void {
  session.connections.delete(connection.connectionId);
  return () => {
    if (!session.connections.has(connection.connectionId) && session.channels.has(connection.channelId))
      session.connections.set(connection.connectionId, connection);
  };
}

export function changeState(session: ClientSession, data: SyncRequestDataOf<'connection.state'>): Step {
  const connection = connectionOf(session, data.connectionId);
  const from = connection.state;
  if (!canTransition(from, data.state)) {
    const allowed = CONNECTION_TRANSITIONS[from];
    throw new DomainError('InvalidTransition', `A connection cannot go from ${from} to ${data.state}.`, [
      {
        field: 'state',
        message: allowed.length ? `from ${from} only ${allowed.join(', ')} may follow` : `${from} is final`,
      },
    ]);
  }
  connection.state = data.state;
  const restore = isTerminalState(data.state) ? forget(session, connection) : undefined;
  return {
    report: {
      kind: 'connection.state',
      client: session.ref,
      channelId: connection.channelId,
      connectionId: connection.connectionId,
      state: data.state,
      error: data.error ?? null,
      // Only while this registration (session) holds the client, as its leaves and closes.
      sessionId: session.sessionId,
    },
    finish: () => ({ connectionId: connection.connectionId, state: data.state }),
    undo: () => {
      connection.state = from;
      restore?.();
    },
  };
}

export function updateConnection(
  session: ClientSession,
  data: SyncRequestDataOf<'connection.update'>,
): Step | typeof AWAIT_ANSWERS {
  const connection = connectionOf(session, data.connectionId);
  const settings = connection.settings;
  // Unmuting what the client muted itself needs the settings the open's answer brings. Without them
  // (and for an operator's mute the edge has not heard of yet) the registry's check decides.
  const unmutingOwn =
    (data.localAudioMuted === false && connection.localAudioMuted) ||
    (data.localVideoMuted === false && connection.localVideoMuted);
  if (unmutingOwn && settings === null) return AWAIT_ANSWERS;
  // Muted by the client itself or by an operator (the effective settings), unmuting may be disabled.
  const refused: Array<{ field: string; message: string }> = [];
  if (
    settings &&
    data.localAudioMuted === false &&
    (connection.localAudioMuted || settings.audioMuted) &&
    settings.audioUnmuteDisabled
  )
    refused.push({ field: 'localAudioMuted', message: 'unmuting audio is disabled' });
  if (
    settings &&
    data.localVideoMuted === false &&
    (connection.localVideoMuted || settings.videoMuted) &&
    settings.videoUnmuteDisabled
  )
    refused.push({ field: 'localVideoMuted', message: 'unmuting video is disabled' });
  if (refused.length) throw new DomainError('UnmuteDisabled', 'Unmuting is disabled for this connection.', refused);
  const claim = session.channels.get(connection.channelId);
  if (claim) checkStreams(claim, data.streams);
  const before = { localAudioMuted: connection.localAudioMuted, localVideoMuted: connection.localVideoMuted };
  if (data.localAudioMuted !== undefined) connection.localAudioMuted = data.localAudioMuted;
  if (data.localVideoMuted !== undefined) connection.localVideoMuted = data.localVideoMuted;
  const result = {
    connectionId: connection.connectionId,
    localAudioMuted: connection.localAudioMuted,
    localVideoMuted: connection.localVideoMuted,
  };
  return {
    report: {
      kind: 'connection.update',
      client: session.ref,
      channelId: connection.channelId,
      connectionId: connection.connectionId,
      ...(data.localAudioMuted !== undefined ? { localAudioMuted: data.localAudioMuted } : {}),
      ...(data.localVideoMuted !== undefined ? { localVideoMuted: data.localVideoMuted } : {}),
      ...(data.tag !== undefined ? { tag: data.tag } : {}),
      ...(data.streams
        ? {
            streams: {
              audio: data.streams.audio ?? null,
              video: data.streams.video ?? null,
              data: data.streams.data ?? null,
            },
          }
        : {}),
    },
    finish: () => result,
    undo: () => Object.assign(connection, before),
    // The registry decides on the settings as they are (the edge's copy may lag behind): its
    // refusal of an unmute is `Forbidden` naming the field.
    refused: (error) =>
      error.code === 'Forbidden' ? new DomainError('UnmuteDisabled', error.message, error.details) : undefined,
  };
}

export function closeConnection(session: ClientSession, data: SyncRequestDataOf<'connection.close'>): Step {
  const connection = connectionOf(session, data.connectionId);
  const restore = forget(session, connection);
  return {
    report: {
      kind: 'connection.close',
      client: session.ref,
      channelId: connection.channelId,
      connectionId: connection.connectionId,
      sessionId: session.sessionId,
    },
    finish: () => ({ connectionId: connection.connectionId }),
    undo: restore,
  };
}

export function connectionStats(session: ClientSession, data: SyncRequestDataOf<'stats'>): Step {
  const finish = () => ({});
  if (data.connectionId === undefined)
    return { report: { kind: 'client.stats', client: session.ref, stats: data.stats }, finish };
  const connection = connectionOf(session, data.connectionId);
  return {
    report: {
      kind: 'connection.stats',
      client: session.ref,
      channelId: connection.channelId,
      connectionId: connection.connectionId,
      stats: data.stats,
    },
    finish,
  };
}

export function joinedClaim(session: ClientSession, channelId: string): ChannelClaim {
  const claim = session.channels.get(channelId);
  if (!claim)
    throw new DomainError('NotJoined', `The client has not joined channel ${channelId}.`, [
      { field: 'channelId', message: 'not joined' },
    ]);
  return claim;
}
