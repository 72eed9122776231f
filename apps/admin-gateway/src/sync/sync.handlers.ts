import { Inject, Injectable } from '@nestjs/common';
import {
  canTransition,
  CONNECTION_TRANSITIONS,
  isTerminalState,
  SYNC_PROTOCOL_VERSION,
  type ChannelClaim,
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
import { EdgeClient } from './edge.client.js';
import { GATEWAY_ID } from './gateway-identity.js';
import { SessionStore } from './session.store.js';
import { SyncError } from './sync.errors.js';
import type { SyncSocket } from './sync-socket.js';

const NO_SETTINGS = { recording: false, recordingTag: null, audioMuted: false, videoMuted: false, audioUnmuteDisabled: false, videoUnmuteDisabled: false };

const sends = (direction: string | undefined) => direction === 'sendrecv' || direction === 'sendonly';

/**
 * What each `/sync` request does. The edge enforces what it can know locally (registration, channel
 * claims, the connection state machine, unmute-disabled settings) before it reports to
 * runtime-registry; the local state changes only once the registry accepted the report.
 */
@Injectable()
export class SyncHandlers {
  constructor(
    private readonly tokens: ClientTokenVerifier,
    private readonly store: SessionStore,
    private readonly edge: EdgeClient,
    @Inject(GATEWAY_ID) private readonly gatewayId: string,
  ) {}

  handle<T extends SyncRequestType>(socket: SyncSocket, type: T, data: SyncRequestDataOf<T>): Promise<SyncResults[T]>;
  async handle(socket: SyncSocket, type: SyncRequestType, data: unknown): Promise<unknown> {
    if (type === 'ping') return { time: new Date().toISOString() };
    if (type === 'register') return this.register(socket, data as SyncRequestDataOf<'register'>);
    const session = socket.session;
    if (!session || session.ended) throw new SyncError('NotRegistered', 'Register first: the first request of a socket is `register`.');
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
      case 'unregister':
        await this.store.end(session, 'left');
        return {};
      default:
        throw new SyncError('InvalidFrame', `Unknown request type ${String(type)}.`);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Registration
  // -------------------------------------------------------------------------------------------

  private async register(socket: SyncSocket, data: SyncRequestDataOf<'register'>): Promise<SyncRegisterResult> {
    if (socket.session || socket.registering) throw new SyncError('AlreadyRegistered', 'This socket has registered already.');
    socket.registering = true;
    try {
      const { payload, application } = await this.tokens.verify(data.token, 'register', { applicationId: data.applicationId, close: true });
      const ref = {
        applicationId: payload.applicationId,
        userId: payload.userId ?? randomUUID(),
        deviceId: payload.deviceId ?? randomUUID(),
        clientId: payload.clientId ?? randomUUID(),
      };
      const claims = payload.channels ?? [];
      const existing = this.store.get(ref);
      if (existing && !existing.ended) {
        // Resume (the client's previous socket dropped, or is still open and is replaced).
        existing.claims = claims;
        this.store.attach(existing, socket);
        return this.registerResult(existing, true);
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
      try {
        await this.edge.report({
          kind: 'client.register',
          client: { ...ref, userAlias: session.userAlias, deviceAlias: session.deviceAlias, tag: session.tag, roles: session.roles, protocol: session.protocol },
          organizationId: session.organizationId,
          gatewayId: this.gatewayId,
          claims,
        });
      } catch (e) {
        this.store.remove(session);
        throw e;
      }
      this.store.attach(session, socket);
      return this.registerResult(session, false);
    } finally {
      socket.registering = false;
    }
  }

  private registerResult(session: ClientSession, resumed: boolean): SyncRegisterResult {
    return {
      protocolVersion: SYNC_PROTOCOL_VERSION,
      ...session.ref,
      gatewayId: this.gatewayId,
      resumed,
      channels: session.describeChannels(),
      connections: session.describeConnections(),
      droppedPushes: resumed ? session.droppedPushes : 0,
    };
  }

  private async updateClient(session: ClientSession, data: SyncRequestDataOf<'client.update'>): Promise<SyncResults['client.update']> {
    await this.edge.report({ kind: 'client.update', client: session.ref, userAlias: data.userAlias, deviceAlias: data.deviceAlias, tag: data.tag });
    if (data.userAlias !== undefined) session.userAlias = data.userAlias;
    if (data.deviceAlias !== undefined) session.deviceAlias = data.deviceAlias;
    if (data.tag !== undefined) session.tag = data.tag;
    return {};
  }

  // -------------------------------------------------------------------------------------------
  // Channels
  // -------------------------------------------------------------------------------------------

  private async join(session: ClientSession, data: SyncRequestDataOf<'join'>): Promise<SyncResults['join']> {
    const { channelId } = data;
    if (session.channels.has(channelId)) throw new SyncError('AlreadyJoined', `The client has joined channel ${channelId} already.`);
    let claims = session.claims;
    if (data.token !== undefined) {
      const { payload } = await this.tokens.verify(data.token, 'join', { applicationId: session.ref.applicationId, close: false });
      for (const field of ['userId', 'deviceId', 'clientId'] as const) {
        const value = payload[field];
        if (value !== undefined && value !== null && value !== session.ref[field]) {
          throw new SyncError('TokenInvalid', 'The join token is for another client.', [{ field, message: 'does not match the registered client' }]);
        }
      }
      claims = payload.channels ?? [];
    }
    const claim = claims.find((c) => c.id === channelId);
    if (!claim) throw new SyncError('Forbidden', `The client holds no claim for channel ${channelId}.`, [{ field: 'channelId', message: 'not claimed by the token' }]);
    const answer = await this.edge.report({ kind: 'client.join', client: session.ref, channelId, claim });
    if (data.token !== undefined) session.claims = claims;
    session.channels.set(channelId, claim);
    return {
      channelId,
      channel: answer.channel ?? { id: channelId, userCount: 0, deviceCount: 0, clientCount: 0, connectionCount: 0 },
      settings: answer.settings ?? NO_SETTINGS,
      claim,
    };
  }

  private async leave(session: ClientSession, data: SyncRequestDataOf<'leave'>): Promise<SyncResults['leave']> {
    const { channelId } = data;
    this.joined(session, channelId);
    await this.edge.report({ kind: 'client.leave', client: session.ref, channelId });
    session.leaveLocally(channelId);
    return { channelId };
  }

  private joined(session: ClientSession, channelId: string): ChannelClaim {
    const claim = session.channels.get(channelId);
    if (!claim) throw new SyncError('NotJoined', `The client has not joined channel ${channelId}.`, [{ field: 'channelId', message: 'not joined' }]);
    return claim;
  }

  // -------------------------------------------------------------------------------------------
  // Connections
  // -------------------------------------------------------------------------------------------

  private checkStreams(claim: ChannelClaim, streams: SyncStreams | undefined): void {
    if (!streams) return;
    const refused: Array<{ field: string; message: string }> = [];
    if (claim.disableSendAudio && sends(streams.audio?.direction)) refused.push({ field: 'streams.audio.direction', message: 'sending audio is disabled by the channel claim' });
    if (claim.disableSendVideo && sends(streams.video?.direction)) refused.push({ field: 'streams.video.direction', message: 'sending video is disabled by the channel claim' });
    if (claim.disableSendData && sends(streams.data?.direction)) refused.push({ field: 'streams.data.direction', message: 'sending data is disabled by the channel claim' });
    if (refused.length) throw new SyncError('Forbidden', 'The channel claim does not allow these streams.', refused);
  }

  private async openConnection(session: ClientSession, data: SyncRequestDataOf<'connection.open'>): Promise<SyncResults['connection.open']> {
    const claim = this.joined(session, data.channelId);
    const disabled = { sfu: claim.disableSfu, mcu: claim.disableMcu, peer: claim.disablePeer }[data.type];
    if (disabled) throw new SyncError('Forbidden', `The channel claim does not allow ${data.type} connections.`, [{ field: 'type', message: 'disabled by the channel claim' }]);
    this.checkStreams(claim, data.streams);
    const connectionId = data.connectionId ?? randomUUID();
    if (session.connections.has(connectionId)) throw new SyncError('Conflict', `Connection ${connectionId} exists already.`, [{ field: 'connectionId', message: 'in use' }]);
    const streams: StreamDescription = { audio: data.streams.audio ?? null, video: data.streams.video ?? null, data: data.streams.data ?? null };
    const answer = await this.edge.report({
      kind: 'connection.open',
      client: session.ref,
      channelId: data.channelId,
      connectionId,
      type: data.type,
      tag: data.tag ?? null,
      streams,
      remoteConnectionId: data.remoteConnectionId ?? null,
    });
    if (!session.channels.has(data.channelId)) throw new SyncError('NotJoined', `The client left channel ${data.channelId} meanwhile.`);
    const settings = answer.settings ?? NO_SETTINGS;
    const connection: EdgeConnection = {
      connectionId,
      channelId: data.channelId,
      type: data.type,
      state: 'new',
      localAudioMuted: data.streams.audio?.muted ?? false,
      localVideoMuted: data.streams.video?.muted ?? false,
      mediaServerId: answer.mediaServerId ?? null,
      settings,
    };
    session.connections.set(connectionId, connection);
    return { connectionId, channelId: data.channelId, state: 'new', mediaServerId: connection.mediaServerId, settings };
  }

  private connection(session: ClientSession, connectionId: string): EdgeConnection {
    const connection = session.connections.get(connectionId);
    if (!connection) throw new SyncError('UnknownConnection', `The client has no open connection ${connectionId}.`, [{ field: 'connectionId', message: 'unknown' }]);
    return connection;
  }

  private async changeState(session: ClientSession, data: SyncRequestDataOf<'connection.state'>): Promise<SyncResults['connection.state']> {
    const connection = this.connection(session, data.connectionId);
    const from = connection.state;
    if (!canTransition(from, data.state)) {
      const allowed = CONNECTION_TRANSITIONS[from];
      throw new SyncError('InvalidTransition', `A connection cannot go from ${from} to ${data.state}.`, [
        { field: 'state', message: allowed.length ? `from ${from} only ${allowed.join(', ')} may follow` : `${from} is final` },
      ]);
    }
    await this.edge.report({
      kind: 'connection.state',
      client: session.ref,
      channelId: connection.channelId,
      connectionId: connection.connectionId,
      state: data.state,
      error: data.error ?? null,
    });
    connection.state = data.state;
    if (isTerminalState(data.state)) session.connections.delete(connection.connectionId);
    return { connectionId: connection.connectionId, state: data.state };
  }

  private async updateConnection(session: ClientSession, data: SyncRequestDataOf<'connection.update'>): Promise<SyncResults['connection.update']> {
    const connection = this.connection(session, data.connectionId);
    const settings = connection.settings ?? NO_SETTINGS;
    const refused: Array<{ field: string; message: string }> = [];
    if (data.localAudioMuted === false && connection.localAudioMuted && settings.audioUnmuteDisabled) refused.push({ field: 'localAudioMuted', message: 'unmuting audio is disabled' });
    if (data.localVideoMuted === false && connection.localVideoMuted && settings.videoUnmuteDisabled) refused.push({ field: 'localVideoMuted', message: 'unmuting video is disabled' });
    if (refused.length) throw new SyncError('UnmuteDisabled', 'Unmuting is disabled for this connection.', refused);
    const claim = session.channels.get(connection.channelId);
    if (claim) this.checkStreams(claim, data.streams);
    await this.edge.report({
      kind: 'connection.update',
      client: session.ref,
      channelId: connection.channelId,
      connectionId: connection.connectionId,
      ...(data.localAudioMuted !== undefined ? { localAudioMuted: data.localAudioMuted } : {}),
      ...(data.localVideoMuted !== undefined ? { localVideoMuted: data.localVideoMuted } : {}),
      ...(data.tag !== undefined ? { tag: data.tag } : {}),
      ...(data.streams ? { streams: { audio: data.streams.audio ?? null, video: data.streams.video ?? null, data: data.streams.data ?? null } } : {}),
    });
    if (data.localAudioMuted !== undefined) connection.localAudioMuted = data.localAudioMuted;
    if (data.localVideoMuted !== undefined) connection.localVideoMuted = data.localVideoMuted;
    return { connectionId: connection.connectionId, localAudioMuted: connection.localAudioMuted, localVideoMuted: connection.localVideoMuted };
  }

  private async closeConnection(session: ClientSession, data: SyncRequestDataOf<'connection.close'>): Promise<SyncResults['connection.close']> {
    const connection = this.connection(session, data.connectionId);
    await this.edge.report({ kind: 'connection.close', client: session.ref, channelId: connection.channelId, connectionId: connection.connectionId });
    session.connections.delete(connection.connectionId);
    return { connectionId: connection.connectionId };
  }

  // -------------------------------------------------------------------------------------------
  // Stats and messages
  // -------------------------------------------------------------------------------------------

  private async stats(session: ClientSession, data: SyncRequestDataOf<'stats'>): Promise<SyncResults['stats']> {
    if (data.connectionId !== undefined) {
      const connection = this.connection(session, data.connectionId);
      await this.edge.report({ kind: 'connection.stats', client: session.ref, channelId: connection.channelId, connectionId: connection.connectionId, stats: data.stats });
    } else {
      await this.edge.report({ kind: 'client.stats', client: session.ref, stats: data.stats });
    }
    return {};
  }

  private async message(session: ClientSession, data: SyncRequestDataOf<'message'>): Promise<SyncResults['message']> {
    const claim = this.joined(session, data.channelId);
    if (claim.disableSendMessage) throw new SyncError('Forbidden', 'The channel claim does not allow sending messages.', [{ field: 'channelId', message: 'sending messages is disabled' }]);
    const message: MessageBody = {
      message: data.message,
      userId: session.ref.userId,
      userAlias: session.userAlias,
      deviceId: session.ref.deviceId,
      deviceAlias: session.deviceAlias,
      clientTag: session.tag,
      clientRoles: session.roles,
    };
    const answer = await this.edge.report({ kind: 'client.message', client: session.ref, channelId: data.channelId, message, ...(data.to ? { to: data.to } : {}) });
    return { delivered: typeof answer.delivered === 'number' ? answer.delivered : 0 };
  }
}
