import { Inject, Injectable } from '@nestjs/common';
import {
  canTransition,
  DomainError,
  type EdgeReport,
  CONNECTION_TRANSITIONS,
  isTerminalState,
  SYNC_PROTOCOL_VERSION,
  type ChannelClaim,
  type EffectiveSettings,
  type MessageBody,
  type StreamDescription,
  type SyncRegisterResult,
  type SyncRequestDataOf,
  type SyncRequestType,
  type SyncResults,
  type SyncStreams,
} from '@switchboard/contracts';
import { randomUUID } from 'node:crypto';
import { ClientSession, type EdgeConnection } from './client-session.js';
import { ClientTokenVerifier } from './client-token.verifier.js';
import { GATEWAY_ID } from './gateway-identity.js';
import { SessionStore } from './session.store.js';
import type { SyncSocket } from './sync-socket.js';

const NO_SETTINGS = {
  recording: false,
  recordingTag: null,
  audioMuted: false,
  videoMuted: false,
  audioUnmuteDisabled: false,
  videoUnmuteDisabled: false,
};

const sends = (direction: string | undefined) => direction === 'sendrecv' || direction === 'sendonly';

/** What the registry answered to a report (fields absent when it answered less). */
type Answer = Record<string, unknown>;

/**
 * One request, prepared: the edge's checks passed and its change of the edge state is applied in
 * advance, so the requests queued after it are checked against the state they would see if it
 * had been answered already (requests of a socket are handled as if one after the other).
 */
export interface Step {
  /** Reported to runtime-registry; absent: answered by the edge alone. */
  report?: EdgeReport;
  /** Once the registry accepted the report (or at once): the result data. May throw (an error frame). */
  finish(answer: Answer): unknown;
  /** Reverts the change applied in advance: the registry refused this report or one before it. */
  undo?(): void;
  /**
   * The error frame for the registry's refusal of this report, when the request names its own (else the registry's).
   */
  refused?(error: DomainError): DomainError | undefined;
}

/** Returned by `prepare` when the request depends on an answer still awaited: prepare it again after. */
export const AWAIT_ANSWERS = Symbol('await-answers');

/**
 * What each `/sync` request does. The edge enforces what it can know locally (registration, channel
 * claims, the connection state machine, unmute-disabled settings) before it reports to
 * runtime-registry. `prepare` checks a request and applies its change of the edge state in
 * advance; SyncServer reports the prepared requests of a socket together and, should the registry
 * refuse one, undoes it and everything prepared after it (see docs/sync-protocol.md).
 */
@Injectable()
export class SyncHandlers {
  constructor(
    private readonly tokens: ClientTokenVerifier,
    private readonly store: SessionStore,
    @Inject(GATEWAY_ID) private readonly gatewayId: string,
  ) {}

  /**
   * `unregister` (never batched): ends the session with the registry (its connections closed), then
   * the socket closes. Answered once the registry was told, or could not be: then the gateway sends
   * the unregister again until the registry takes it (see SessionStore#end), so the answer is `{}` either way.
   */
  async unregister(socket: SyncSocket): Promise<SyncResults['unregister']> {
    const session = this.registered(socket);
    await this.store.end(session, 'left');
    return {};
  }

  prepare(
    socket: SyncSocket,
    type: SyncRequestType,
    data: unknown,
  ): Promise<Step | typeof AWAIT_ANSWERS> | Step | typeof AWAIT_ANSWERS {
    if (type === 'ping') return { finish: () => ({ time: new Date().toISOString() }) };
    if (type === 'register') return this.register(socket, data as SyncRequestDataOf<'register'>);
    const session = this.registered(socket);
    switch (type) {
      case 'join':
        return this.join(session, data as SyncRequestDataOf<'join'>);
      case 'leave':
        return this.leave(session, data as SyncRequestDataOf<'leave'>);
      case 'connection.open':
        return this.openConnection(session, data as SyncRequestDataOf<'connection.open'>);
      case 'connection.state':
        return this.changeState(session, data as SyncRequestDataOf<'connection.state'>);
      case 'connection.update':
        return this.updateConnection(session, data as SyncRequestDataOf<'connection.update'>);
      case 'connection.close':
        return this.closeConnection(session, data as SyncRequestDataOf<'connection.close'>);
      case 'stats':
        return this.stats(session, data as SyncRequestDataOf<'stats'>);
      case 'message':
        return this.message(session, data as SyncRequestDataOf<'message'>);
      case 'client.update':
        return this.updateClient(session, data as SyncRequestDataOf<'client.update'>);
      default:
        throw new DomainError('InvalidFrame', `Unknown request type ${String(type)}.`);
    }
  }

  private registered(socket: SyncSocket): ClientSession {
    const session = socket.session;
    if (!session || session.ended)
      throw new DomainError('NotRegistered', 'Register first: the first request of a socket is `register`.');
    return session;
  }

  // -------------------------------------------------------------------------------------------
  // Registration
  // -------------------------------------------------------------------------------------------

  private async register(socket: SyncSocket, data: SyncRequestDataOf<'register'>): Promise<Step> {
    if (socket.session || socket.registering)
      throw new DomainError('AlreadyRegistered', 'This socket has registered already.');
    socket.registering = true;
    try {
      const { payload, application } = await this.tokens.verify(data.token, 'register', {
        applicationId: data.applicationId,
      });
      const ref = {
        applicationId: payload.applicationId,
        userId: payload.userId ?? randomUUID(),
        deviceId: payload.deviceId ?? randomUUID(),
        clientId: payload.clientId ?? randomUUID(),
      };
      const claims = payload.channels ?? [];
      let existing = this.store.get(ref);
      if (!existing || existing.ended) {
        // A new session: the previous one's unregister goes first, if the registry has not taken it
        // yet, and so does the unregister of a registration of the client this replica had no
        // session for (SessionReconciler#ghosts). Checked again right before the session is added
        // (in the same turn): one that came meanwhile is waited for too.
        do await this.store.settle(ref);
        while (this.store.unregistering(ref));
        existing = this.store.get(ref);
      }
      if (existing && !existing.ended) {
        // Resume (the client's previous socket dropped, or is still open and is replaced).
        existing.claims = claims;
        this.store.attach(existing, socket);
        // The channels and connections as of this request: the requests queued after it change them before it is
        // answered.
        const held = { channels: existing.describeChannels(), connections: existing.describeConnections() };
        return { finish: () => this.registerResult(existing, true, held) };
      }
      const session = new ClientSession(
        ref,
        application.organizationId,
        claims,
        payload.clientRoles ?? [],
        data.userAlias ?? null,
        data.deviceAlias ?? null,
        data.tag ?? null,
        data.protocol ?? 'websocket',
      );
      this.store.add(session);
      this.store.attach(session, socket);
      return {
        report: {
          kind: 'client.register',
          client: {
            ...ref,
            userAlias: session.userAlias,
            deviceAlias: session.deviceAlias,
            tag: session.tag,
            roles: session.roles,
            protocol: session.protocol,
          },
          organizationId: session.organizationId,
          gatewayId: this.gatewayId,
          claims,
          sessionId: session.sessionId,
        },
        finish: () => this.registerResult(session, false, { channels: [], connections: [] }),
        undo: () => {
          this.store.remove(session);
          if (socket.session === session) socket.session = null;
          session.socket = null;
        },
      };
    } finally {
      socket.registering = false;
    }
  }

  private registerResult(
    session: ClientSession,
    resumed: boolean,
    held: Pick<SyncRegisterResult, 'channels' | 'connections'>,
  ): SyncRegisterResult {
    return {
      protocolVersion: SYNC_PROTOCOL_VERSION,
      ...session.ref,
      gatewayId: this.gatewayId,
      resumed,
      ...held,
      droppedPushes: resumed ? session.droppedPushes : 0,
    };
  }

  private updateClient(session: ClientSession, data: SyncRequestDataOf<'client.update'>): Step {
    const before = { userAlias: session.userAlias, deviceAlias: session.deviceAlias, tag: session.tag };
    if (data.userAlias !== undefined) session.userAlias = data.userAlias;
    if (data.deviceAlias !== undefined) session.deviceAlias = data.deviceAlias;
    if (data.tag !== undefined) session.tag = data.tag;
    return {
      report: {
        kind: 'client.update',
        client: session.ref,
        userAlias: data.userAlias,
        deviceAlias: data.deviceAlias,
        tag: data.tag,
      },
      finish: () => ({}),
      undo: () => Object.assign(session, before),
    };
  }

  // -------------------------------------------------------------------------------------------
  // Channels
  // -------------------------------------------------------------------------------------------

  private async join(session: ClientSession, data: SyncRequestDataOf<'join'>): Promise<Step> {
    const { channelId } = data;
    if (session.channels.has(channelId))
      throw new DomainError('AlreadyJoined', `The client has joined channel ${channelId} already.`);
    let claims = session.claims;
    if (data.token !== undefined) {
      // Expired, tampered or another application's: an error frame and the socket closed (4001-4003), as at register.
      const { payload } = await this.tokens.verify(data.token, 'join', { applicationId: session.ref.applicationId });
      // A valid token of this application naming another client: refused, the socket stays open.
      for (const field of ['userId', 'deviceId', 'clientId'] as const) {
        const value = payload[field];
        if (value !== undefined && value !== null && value !== session.ref[field]) {
          throw new DomainError('TokenForAnotherClient', 'The join token is for another client.', [
            { field, message: 'does not match the registered client' },
          ]);
        }
      }
      claims = payload.channels ?? [];
    }
    const claim = claims.find((c) => c.id === channelId);
    if (!claim)
      throw new DomainError('Forbidden', `The client holds no claim for channel ${channelId}.`, [
        { field: 'channelId', message: 'not claimed by the token' },
      ]);
    const previousClaims = session.claims;
    session.claims = claims;
    session.channels.set(channelId, claim);
    return {
      report: { kind: 'client.join', client: session.ref, channelId, claim },
      finish: (answer) => ({
        channelId,
        channel: (answer.channel as SyncResults['join']['channel'] | undefined) ?? {
          id: channelId,
          userCount: 0,
          deviceCount: 0,
          clientCount: 0,
          connectionCount: 0,
        },
        settings: (answer.settings as SyncResults['join']['settings'] | undefined) ?? NO_SETTINGS,
        claim,
      }),
      undo: () => {
        session.channels.delete(channelId);
        session.claims = previousClaims;
      },
    };
  }

  private leave(session: ClientSession, data: SyncRequestDataOf<'leave'>): Step {
    const { channelId } = data;
    const claim = this.joined(session, channelId);
    const connections = session.connectionsIn(channelId);
    session.leaveLocally(channelId);
    return {
      // Only while this registration (session) holds the client, as every leave or close of a session.
      report: { kind: 'client.leave', client: session.ref, channelId, sessionId: session.sessionId },
      finish: () => ({ channelId }),
      undo: () => {
        session.channels.set(channelId, claim);
        for (const c of connections) session.connections.set(c.connectionId, c);
      },
    };
  }

  private joined(session: ClientSession, channelId: string): ChannelClaim {
    const claim = session.channels.get(channelId);
    if (!claim)
      throw new DomainError('NotJoined', `The client has not joined channel ${channelId}.`, [
        { field: 'channelId', message: 'not joined' },
      ]);
    return claim;
  }

  // -------------------------------------------------------------------------------------------
  // Connections
  // -------------------------------------------------------------------------------------------

  private checkStreams(claim: ChannelClaim, streams: SyncStreams | undefined): void {
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

  private openConnection(session: ClientSession, data: SyncRequestDataOf<'connection.open'>): Step {
    const claim = this.joined(session, data.channelId);
    const disabled = { sfu: claim.disableSfu, mcu: claim.disableMcu, peer: claim.disablePeer }[data.type];
    if (disabled)
      throw new DomainError('Forbidden', `The channel claim does not allow ${data.type} connections.`, [
        { field: 'type', message: 'disabled by the channel claim' },
      ]);
    this.checkStreams(claim, data.streams);
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

  private connection(session: ClientSession, connectionId: string): EdgeConnection {
    const connection = session.connections.get(connectionId);
    if (!connection)
      throw new DomainError('UnknownConnection', `The client has no open connection ${connectionId}.`, [
        { field: 'connectionId', message: 'unknown' },
      ]);
    return connection;
  }

  /** Forgets a connection in advance (final state, close); the undo puts it back. */
  private forget(session: ClientSession, connection: EdgeConnection): () => void {
    session.connections.delete(connection.connectionId);
    return () => {
      if (!session.connections.has(connection.connectionId) && session.channels.has(connection.channelId))
        session.connections.set(connection.connectionId, connection);
    };
  }

  private changeState(session: ClientSession, data: SyncRequestDataOf<'connection.state'>): Step {
    const connection = this.connection(session, data.connectionId);
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
    const restore = isTerminalState(data.state) ? this.forget(session, connection) : undefined;
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

  private updateConnection(
    session: ClientSession,
    data: SyncRequestDataOf<'connection.update'>,
  ): Step | typeof AWAIT_ANSWERS {
    const connection = this.connection(session, data.connectionId);
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
    if (claim) this.checkStreams(claim, data.streams);
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

  private closeConnection(session: ClientSession, data: SyncRequestDataOf<'connection.close'>): Step {
    const connection = this.connection(session, data.connectionId);
    const restore = this.forget(session, connection);
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

  // -------------------------------------------------------------------------------------------
  // Stats and messages
  // -------------------------------------------------------------------------------------------

  private stats(session: ClientSession, data: SyncRequestDataOf<'stats'>): Step {
    const finish = () => ({});
    if (data.connectionId === undefined)
      return { report: { kind: 'client.stats', client: session.ref, stats: data.stats }, finish };
    const connection = this.connection(session, data.connectionId);
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

  private message(session: ClientSession, data: SyncRequestDataOf<'message'>): Step {
    const claim = this.joined(session, data.channelId);
    if (claim.disableSendMessage)
      throw new DomainError('Forbidden', 'The channel claim does not allow sending messages.', [
        { field: 'channelId', message: 'sending messages is disabled' },
      ]);
    const message: MessageBody = {
      message: data.message,
      userId: session.ref.userId,
      userAlias: session.userAlias,
      deviceId: session.ref.deviceId,
      deviceAlias: session.deviceAlias,
      clientTag: session.tag,
      clientRoles: session.roles,
    };
    return {
      report: {
        kind: 'client.message',
        client: session.ref,
        channelId: data.channelId,
        message,
        ...(data.to ? { to: data.to } : {}),
      },
      finish: (answer) => ({ delivered: typeof answer.delivered === 'number' ? answer.delivered : 0 }),
    };
  }
}
