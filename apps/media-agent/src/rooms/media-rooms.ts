import { createHmac, randomInt } from 'node:crypto';
import Janode from 'janode';
import VideoRoomPlugin, { type VideoRoomHandle } from 'janode/plugins/videoroom';
import { DomainError, type MediaAgentCommandOf, type MediaAgentResults } from '@switchboard/contracts';
import type { JsonLogger } from '@switchboard/service-kit';
import { within, type JanusClient } from '../janus/janus-client.js';
import { janusFailure } from './janus-errors.js';
import type { MediaEvents } from './media-events.js';
import { midsByKind } from './sdp.js';
import { watchHandle, type Liveness, type StatsTarget } from './handle-watch.js';

type Cmd<K extends keyof MediaAgentResults> = MediaAgentCommandOf<K>;
type ChannelRef = { applicationId: string; channelId: string };

interface Publisher {
  role: 'publisher';
  connectionId: string;
  handle: VideoRoomHandle;
  feed: number;
  mids: { audio: string[]; video: string[] };
  /** Resolves at Janus's webrtcup: subscribing earlier fails now and then with "No such feed". */
  up: Promise<void>;
  liveness: Liveness;
}

interface Subscriber {
  role: 'subscriber';
  connectionId: string;
  handle: VideoRoomHandle;
  remoteConnectionId: string;
  liveness: Liveness;
}

type Connection = Publisher | Subscriber;

interface Room extends ChannelRef {
  janusRoom: number;
  secret: string;
  connections: Map<string, Connection>;
}

const channelKey = (ref: ChannelRef) => JSON.stringify([ref.applicationId, ref.channelId]);
/** Marks the rooms an agent made (their Janus `description`), so that a later session finds them. */
const DESCRIPTION_PREFIX = 'switchboard ';

/** The channel a room description names, or undefined for a room no agent made. */
function channelOfDescription(description: string | undefined): ChannelRef | undefined {
  if (!description?.startsWith(DESCRIPTION_PREFIX)) return undefined;
  try {
    const [applicationId, channelId] = JSON.parse(description.slice(DESCRIPTION_PREFIX.length)) as unknown[];
    if (typeof applicationId === 'string' && typeof channelId === 'string') return { applicationId, channelId };
  } catch {
    // not one of ours
  }
  return undefined;
}

export interface MediaRoomsOptions {
  roomAdminKey: string;
  requestTimeoutMs: number;
}

/**
 * The VideoRoom rooms of this agent's Janus, one per channel, and the connections in them. Janus's
 * room numbers, feed ids and handles stay here: the control plane names channels and connections.
 * A Janus link lost loses every handle (Janus ends the session), so the state is dropped with it.
 */
export class MediaRooms {
  private readonly rooms = new Map<string, Room>();
  /** The handle for room requests (create, destroy, moderate, kick), attached on first use. */
  private control?: Promise<VideoRoomHandle>;
  /** The clean-up of what an earlier session left in Janus: commands wait for it. */
  private cleaning: Promise<void> = Promise.resolve();

  constructor(
    private readonly janus: JanusClient,
    private readonly events: MediaEvents,
    private readonly logger: JsonLogger,
    private readonly options: MediaRoomsOptions,
  ) {
    janus.onChange((change) => {
      if (change.up) this.cleaning = this.cleanUp();
      else this.loseAll();
    });
  }

  /**
   * Janus lost: the agent's session ends with every handle in it, so every connection is reported
   * ended and every room lost. The rooms themselves are destroyed by the next clean-up.
   */
  private loseAll(): void {
    if (this.rooms.size) this.logger.event('warn', 'Janus lost: its rooms are forgotten', { rooms: this.rooms.size });
    for (const room of this.rooms.values()) {
      const ref = { applicationId: room.applicationId, channelId: room.channelId };
      for (const connectionId of room.connections.keys())
        this.events.publish({ kind: 'connection.ended', ...ref, connectionId, reason: 'media-server-lost' });
      this.events.publish({ kind: 'room.ended', ...ref, reason: 'media-server-lost' });
    }
    this.rooms.clear();
    this.control = undefined;
  }

  /**
   * On every (re)connect: destroys the rooms an earlier agent session left in Janus (an agent
   * restarted, or its link lost), so that nothing orphaned stays. Their secrets are derived from the
   * room admin key, so any session of the agent can destroy them.
   */
  private async cleanUp(): Promise<void> {
    try {
      const control = await this.janusCall('list the rooms', () => this.controlHandle());
      const { list } = await this.janusCall('list the rooms', () =>
        control.list({ admin_key: this.options.roomAdminKey }),
      );
      for (const leftover of list) {
        const ref = channelOfDescription(leftover.description);
        if (!ref || this.rooms.get(channelKey(ref))?.janusRoom === leftover.room) continue;
        try {
          await this.janusCall('destroy a leftover room', () =>
            control.destroy({ room: leftover.room, secret: this.secretOf(leftover.room) }),
          );
        } catch (e) {
          this.logger.event('warn', 'leftover room not destroyed', {
            janusRoom: leftover.room,
            error: (e as Error).message,
          });
          continue;
        }
        this.logger.event('info', 'destroyed a room left by an earlier agent session', { janusRoom: leftover.room });
        this.events.publish({ kind: 'room.ended', ...ref, reason: 'cleaned-up' });
      }
    } catch (e) {
      this.logger.event('warn', 'leftover rooms not cleaned up', { error: (e as Error).message });
    }
  }

  private secretOf(janusRoom: number): string {
    return createHmac('sha256', this.options.roomAdminKey).update(`videoroom ${janusRoom}`).digest('base64url');
  }

  async createRoom(cmd: Cmd<'room.create'>): Promise<MediaAgentResults['room.create']> {
    await this.cleaning;
    if (this.rooms.has(channelKey(cmd))) return { created: false };
    const janusRoom = randomInt(1, 2 ** 47);
    const room: Room = {
      applicationId: cmd.applicationId,
      channelId: cmd.channelId,
      janusRoom,
      secret: this.secretOf(janusRoom),
      connections: new Map(),
    };
    await this.janusCall('create the room', async () =>
      (await this.controlHandle()).create({
        room: room.janusRoom,
        description: DESCRIPTION_PREFIX + channelKey(cmd),
        secret: room.secret,
        admin_key: this.options.roomAdminKey,
        bitrate: cmd.bitrate ?? 0,
        max_publishers: cmd.maxPublishers ?? 100,
        fir_freq: 10,
      }),
    );
    // A concurrent create of the same channel won: keep its room, drop ours.
    if (this.rooms.has(channelKey(cmd))) {
      void this.destroyJanusRoom(room);
      return { created: false };
    }
    this.rooms.set(channelKey(cmd), room);
    return { created: true };
  }

  async listRooms(): Promise<MediaAgentResults['rooms.list']> {
    await this.cleaning;
    const rooms = [...this.rooms.values()].map((room) => ({
      ...this.refOf(room),
      connections: [...room.connections.values()].map((c) =>
        c.role === 'publisher'
          ? { connectionId: c.connectionId, role: c.role }
          : { connectionId: c.connectionId, role: c.role, remoteConnectionId: c.remoteConnectionId },
      ),
    }));
    return { rooms };
  }

  async destroyRoom(cmd: Cmd<'room.destroy'>): Promise<MediaAgentResults['room.destroy']> {
    const room = this.rooms.get(channelKey(cmd));
    if (!room) return { destroyed: false, connectionIds: [] };
    this.rooms.delete(channelKey(cmd));
    const connectionIds = [...room.connections.keys()];
    await Promise.all([...room.connections.values()].map((c) => this.end(room, c, 'room-destroyed')));
    await this.destroyJanusRoom(room);
    this.events.publish({
      kind: 'room.ended',
      applicationId: room.applicationId,
      channelId: room.channelId,
      reason: 'destroyed',
    });
    return { destroyed: true, connectionIds };
  }

  async joinPublisher(cmd: Cmd<'publisher.join'>): Promise<MediaAgentResults['publisher.join']> {
    const room = this.roomOf(cmd);
    this.assertFree(room, cmd.connectionId);
    const handle = await this.janusCall('attach a handle', () => this.janus.attach(VideoRoomPlugin));
    let markUp!: () => void;
    const up = new Promise<void>((resolve) => (markUp = resolve));
    const liveness: Liveness = { connected: false };
    watchHandle(handle, { ...this.refOf(room), connectionId: cmd.connectionId }, this.events, liveness, markUp);
    try {
      const joined = await this.janusCall('join the publisher', () =>
        handle.joinConfigurePublisher({ room: room.janusRoom, display: cmd.display, jsep: cmd.offer }),
      );
      if (!joined.jsep) throw new DomainError('Internal', 'Janus answered the publisher without an SDP answer');
      this.assertFree(room, cmd.connectionId);
      const publisher: Publisher = {
        role: 'publisher',
        connectionId: cmd.connectionId,
        handle,
        feed: joined.feed,
        mids: midsByKind(cmd.offer.sdp),
        up,
        liveness,
      };
      room.connections.set(cmd.connectionId, publisher);
      return { answer: { type: 'answer', sdp: joined.jsep.sdp } };
    } catch (e) {
      void handle.detach().catch(() => undefined);
      throw e;
    }
  }

  async joinSubscriber(cmd: Cmd<'subscriber.join'>): Promise<MediaAgentResults['subscriber.join']> {
    const room = this.roomOf(cmd);
    this.assertFree(room, cmd.connectionId);
    const remote = room.connections.get(cmd.remoteConnectionId);
    if (remote?.role !== 'publisher')
      throw new DomainError(
        'NotFound',
        `No publisher '${cmd.remoteConnectionId.slice(0, 256)}' in the channel's room.`,
      );
    // Waiting is bounded: a publisher that never comes up is then refused by Janus itself.
    await within(remote.up, this.options.requestTimeoutMs, '').catch(() => undefined);
    const handle = await this.janusCall('attach a handle', () => this.janus.attach(VideoRoomPlugin));
    const liveness: Liveness = { connected: false };
    watchHandle(handle, { ...this.refOf(room), connectionId: cmd.connectionId }, this.events, liveness);
    handle.on(VideoRoomPlugin.EVENT.VIDEOROOM_UPDATED, (e: { jsep?: { type: string; sdp: string } }) => {
      if (e.jsep?.type !== 'offer') return;
      const offer = { type: 'offer' as const, sdp: e.jsep.sdp };
      this.events.publish({ kind: 'connection.offer', ...this.refOf(room), connectionId: cmd.connectionId, offer });
    });
    try {
      const joined = await this.janusCall('join the subscriber', () =>
        handle.joinSubscriber({ room: room.janusRoom, streams: [{ feed: remote.feed }] }),
      );
      if (!joined.jsep) throw new DomainError('Internal', 'Janus answered the subscriber without an SDP offer');
      this.assertFree(room, cmd.connectionId);
      room.connections.set(cmd.connectionId, {
        role: 'subscriber',
        connectionId: cmd.connectionId,
        handle,
        remoteConnectionId: cmd.remoteConnectionId,
        liveness,
      });
      return { offer: { type: 'offer', sdp: joined.jsep.sdp } };
    } catch (e) {
      void handle.detach().catch(() => undefined);
      throw e;
    }
  }

  async answerSubscriber(cmd: Cmd<'subscriber.answer'>): Promise<null> {
    const connection = this.connectionOf(cmd);
    if (connection.role !== 'subscriber')
      throw new DomainError('Conflict', `Connection '${cmd.connectionId.slice(0, 256)}' is not a subscriber.`);
    await this.janusCall('start the subscriber', () => connection.handle.start({ jsep: cmd.answer }));
    return null;
  }

  async trickle(cmd: Cmd<'connection.trickle'>): Promise<null> {
    const { handle } = this.connectionOf(cmd);
    if (cmd.candidates.length) await this.janusCall('trickle', () => handle.trickle(cmd.candidates));
    if (cmd.completed) await this.janusCall('trickle', () => handle.trickleComplete());
    return null;
  }

  async leave(cmd: Cmd<'connection.leave'>): Promise<MediaAgentResults['connection.leave']> {
    const room = this.rooms.get(channelKey(cmd));
    const connection = room?.connections.get(cmd.connectionId);
    if (!room || !connection) return { left: false };
    await this.end(room, connection, 'left');
    return { left: true };
  }

  async moderate(cmd: Cmd<'connections.moderate'>): Promise<MediaAgentResults['connections.moderate']> {
    const room = this.roomOf(cmd);
    const publishers = this.publishersOf(room, cmd.connectionIds);
    const requests: Array<{ publisher: Publisher; mid: string; mute: boolean }> = [];
    for (const publisher of publishers) {
      if (cmd.audioMuted !== undefined)
        for (const mid of publisher.mids.audio) requests.push({ publisher, mid, mute: cmd.audioMuted });
      if (cmd.videoMuted !== undefined)
        for (const mid of publisher.mids.video) requests.push({ publisher, mid, mute: cmd.videoMuted });
    }
    const control = await this.janusCall('moderate', () => this.controlHandle());
    await Promise.all(
      requests.map(({ publisher, mid, mute }) =>
        this.janusCall('moderate', async () => {
          const answer = await control.message({
            request: 'moderate',
            room: room.janusRoom,
            secret: room.secret,
            id: publisher.feed,
            mid,
            mute,
          });
          const data = answer.plugindata?.data;
          if (data?.videoroom !== 'success')
            throw new Error(typeof data?.error === 'string' ? data.error : 'moderate refused');
        }),
      ),
    );
    return { moderated: publishers.map((p) => p.connectionId) };
  }

  async kick(cmd: Cmd<'connections.kick'>): Promise<MediaAgentResults['connections.kick']> {
    const room = this.roomOf(cmd);
    const found = cmd.connectionIds.flatMap((id) => room.connections.get(id) ?? []);
    await Promise.all(found.map((connection) => this.end(room, connection, 'kicked')));
    return { kicked: found.map((c) => c.connectionId) };
  }

  /** Every connection with its handle (statistics). */
  statsTargets(): StatsTarget[] {
    return [...this.rooms.values()].flatMap((room) =>
      [...room.connections.values()].map((c) => ({
        ...this.refOf(room),
        connectionId: c.connectionId,
        role: c.role,
        handleId: c.handle.id,
        connected: c.liveness.connected,
      })),
    );
  }

  /** The handle of a publisher in this agent's rooms (recording), or undefined. */
  publisherHandle(ref: ChannelRef & { connectionId: string }): VideoRoomHandle | undefined {
    const connection = this.rooms.get(channelKey(ref))?.connections.get(ref.connectionId);
    return connection?.role === 'publisher' ? connection.handle : undefined;
  }

  /** Settles once the clean-up of the latest (re)connect is done: an earlier session's rooms are gone. */
  cleanedUp(): Promise<void> {
    return this.cleaning;
  }

  /** Number of rooms and connections (metrics, tests). */
  counts(): { rooms: number; connections: number } {
    let connections = 0;
    for (const room of this.rooms.values()) connections += room.connections.size;
    return { rooms: this.rooms.size, connections };
  }

  /**
   * Ends one connection: a kicked publisher is kicked out of the room first (Janus closes its
   * PeerConnection); then its handle is detached. The subscribers of a publisher are told.
   */
  private async end(room: Room, connection: Connection, reason: 'left' | 'kicked' | 'room-destroyed'): Promise<void> {
    room.connections.delete(connection.connectionId);
    if (connection.role === 'publisher' && reason === 'kicked') {
      await this.janusCall('kick', async () =>
        (await this.controlHandle()).kick({ room: room.janusRoom, feed: connection.feed, secret: room.secret }),
      ).catch((e: unknown) => this.logger.event('warn', 'Janus kick failed', { error: (e as Error).message }));
    }
    await within(connection.handle.detach(), this.options.requestTimeoutMs, 'detach').catch(() => undefined);
    const ref = { applicationId: room.applicationId, channelId: room.channelId };
    this.events.publish({ kind: 'connection.ended', ...ref, connectionId: connection.connectionId, reason });
    if (connection.role !== 'publisher' || reason === 'room-destroyed') return;
    for (const other of room.connections.values()) {
      if (other.role !== 'subscriber' || other.remoteConnectionId !== connection.connectionId) continue;
      this.events.publish({
        kind: 'subscription.ended',
        ...ref,
        connectionId: other.connectionId,
        remoteConnectionId: connection.connectionId,
        reason,
      });
    }
  }

  private controlHandle(): Promise<VideoRoomHandle> {
    if (!this.control) {
      const attaching = this.janus.attach(VideoRoomPlugin);
      this.control = attaching;
      attaching.then(
        (handle) => handle.once(Janode.EVENT.HANDLE_DETACHED, () => this.control === attaching && this.forgetControl()),
        () => this.forgetControl(),
      );
    }
    return this.control;
  }

  private forgetControl(): void {
    this.control = undefined;
  }

  private async destroyJanusRoom(room: Room): Promise<void> {
    await this.janusCall('destroy the room', async () =>
      (await this.controlHandle()).destroy({ room: room.janusRoom, secret: room.secret }),
    ).catch((e: unknown) => this.logger.event('warn', 'Janus room not destroyed', { error: (e as Error).message }));
  }

  private async janusCall<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await within(call(), this.options.requestTimeoutMs, 'Janus did not answer in time');
    } catch (e) {
      throw janusFailure(`Could not ${what}`, e);
    }
  }

  private refOf(room: Room): ChannelRef {
    return { applicationId: room.applicationId, channelId: room.channelId };
  }

  private roomOf(ref: ChannelRef): Room {
    const room = this.rooms.get(channelKey(ref));
    if (!room) throw new DomainError('NotFound', 'No room for the channel on this media server.');
    return room;
  }

  private connectionOf(ref: ChannelRef & { connectionId: string }): Connection {
    const connection = this.roomOf(ref).connections.get(ref.connectionId);
    if (!connection) throw new DomainError('NotFound', `No connection '${ref.connectionId.slice(0, 256)}' here.`);
    return connection;
  }

  /** Before a join and again after it (the room may have been destroyed, the id taken, meanwhile). */
  private assertFree(room: Room, connectionId: string): void {
    if (this.rooms.get(channelKey(room)) !== room)
      throw new DomainError('NotFound', 'The room of the channel was destroyed meanwhile.');
    if (room.connections.has(connectionId))
      throw new DomainError('Conflict', `Connection '${connectionId.slice(0, 256)}' is already in the room.`);
  }

  private publishersOf(room: Room, connectionIds: readonly string[]): Publisher[] {
    return connectionIds.flatMap((id) => {
      const connection = room.connections.get(id);
      return connection?.role === 'publisher' ? [connection] : [];
    });
  }
}
