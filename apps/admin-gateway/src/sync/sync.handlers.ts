import { Inject, Injectable } from '@nestjs/common';
import {
  DomainError,
  SYNC_PROTOCOL_VERSION,
  type MessageBody,
  type SyncRegisterResult,
  type SyncRequestDataOf,
  type SyncRequestType,
  type SyncResults,
} from '@switchboard/contracts';
import { randomUUID } from 'node:crypto';
import { ClientSession } from './client-session.js';
import { ClientTokenVerifier } from './client-token.verifier.js';
import { GATEWAY_ID } from './gateway-identity.js';
import { SessionStore } from './session.store.js';
import { AWAIT_ANSWERS, NO_SETTINGS, type Step } from './sync-step.js';
import {
  changeState,
  closeConnection,
  connectionStats,
  joinedClaim,
  openConnection,
  updateConnection,
} from './connection-steps.js';
import type { SyncSocket } from './sync-socket.js';
import { IceServers } from '../media/ice-servers.js';
import { MediaSignalling } from '../media/media-signalling.js';
import { PeerRelayClient } from '../media/peer-relay.js';

const SIGNALLING = [
  'connection.offer',
  'connection.subscribe',
  'connection.answer',
  'connection.candidates',
  'connection.relay',
] as const;
type SignallingType = (typeof SIGNALLING)[number];

/** The media signalling requests: handled one by one with a media-agent, never batched to the registry. */
export function isSignalling(type: SyncRequestType | null): type is SignallingType {
  return (SIGNALLING as readonly (string | null)[]).includes(type);
}

/**
 * What each `/sync` request does: `prepare` checks what the edge knows locally and applies the change in
 * advance, so SyncServer can report a socket's requests together and undo them (README: the /sync edge).
 */
@Injectable()
export class SyncHandlers {
  constructor(
    private readonly tokens: ClientTokenVerifier,
    private readonly store: SessionStore,
    @Inject(GATEWAY_ID) private readonly gatewayId: string,
    private readonly media: MediaSignalling,
    private readonly iceServers: IceServers,
    private readonly peers: PeerRelayClient,
  ) {}

  /** A media signalling request (see isSignalling), answered once the media-agent answered. */
  signal(socket: SyncSocket, type: SignallingType, data: unknown): Promise<unknown> {
    const session = this.registered(socket);
    switch (type) {
      case 'connection.offer':
        return this.media.offer(session, data as SyncRequestDataOf<'connection.offer'>);
      case 'connection.subscribe':
        return this.media.subscribe(session, data as SyncRequestDataOf<'connection.subscribe'>);
      case 'connection.answer':
        return this.media.answer(session, data as SyncRequestDataOf<'connection.answer'>);
      case 'connection.candidates':
        return this.media.candidates(session, data as SyncRequestDataOf<'connection.candidates'>);
      case 'connection.relay':
        return this.peers.relay(session, data as SyncRequestDataOf<'connection.relay'>);
    }
  }

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
        return openConnection(session, data as SyncRequestDataOf<'connection.open'>);
      case 'connection.state':
        return changeState(session, data as SyncRequestDataOf<'connection.state'>);
      case 'connection.update':
        return updateConnection(session, data as SyncRequestDataOf<'connection.update'>);
      case 'connection.close':
        return closeConnection(session, data as SyncRequestDataOf<'connection.close'>);
      case 'stats':
        return connectionStats(session, data as SyncRequestDataOf<'stats'>);
      case 'message':
        return this.message(session, data as SyncRequestDataOf<'message'>);
      case 'client.update':
        return this.updateClient(session, data as SyncRequestDataOf<'client.update'>);
      // SyncServer handles these on their own, never prepared.
      case 'unregister':
      case 'connection.offer':
      case 'connection.subscribe':
      case 'connection.answer':
      case 'connection.candidates':
      case 'connection.relay':
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
        // session for (GhostRegistrations). Checked again right before the session is added
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
      iceServers: this.iceServers.forClient(session.ref.clientId),
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
        upstreams: (answer.upstreams as SyncResults['join']['upstreams'] | undefined) ?? [],
      }),
      undo: () => {
        session.channels.delete(channelId);
        session.claims = previousClaims;
      },
    };
  }

  private leave(session: ClientSession, data: SyncRequestDataOf<'leave'>): Step {
    const { channelId } = data;
    const claim = joinedClaim(session, channelId);
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

  // -------------------------------------------------------------------------------------------
  // Messages
  // -------------------------------------------------------------------------------------------

  private message(session: ClientSession, data: SyncRequestDataOf<'message'>): Step {
    const claim = joinedClaim(session, data.channelId);
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
