import { createHmac, randomInt } from 'node:crypto';
import AudioBridgePlugin, { type AudioBridgeHandle } from 'janode/plugins/audiobridge';
import { DomainError, type MediaAgentCommandOf, type MediaAgentResults } from '@switchboard/contracts';
import type { JsonLogger } from '@switchboard/service-kit';
import { within, type JanusClient } from '../janus/janus-client.js';
import { watchHandle, type Liveness, type StatsTarget } from './handle-watch.js';
import { janusFailure } from './janus-errors.js';
import type { MediaEvents } from './media-events.js';

type Cmd<K extends keyof MediaAgentResults> = MediaAgentCommandOf<K>;
type ChannelRef = { applicationId: string; channelId: string };

interface Participant {
  connectionId: string;
  handle: AudioBridgeHandle;
  feed: number;
  liveness: Liveness;
}

interface Mixer extends ChannelRef {
  janusRoom: number;
  secret: string;
  participants: Map<string, Participant>;
}

const channelKey = (ref: ChannelRef) => JSON.stringify([ref.applicationId, ref.channelId]);
/** Marks the AudioBridge rooms an agent made, so that a later session finds and destroys them. */
const DESCRIPTION_PREFIX = 'switchboard ';

export const MCU_VIDEO_REFUSED =
  'mcu video is not supported: Janus mixes audio only (AudioBridge), it has no video mixer; use sfu connections for video.';

export interface MediaMixersOptions {
  roomAdminKey: string;
  requestTimeoutMs: number;
}

/**
 * The `mcu` side: one AudioBridge room per channel, where Janus mixes the participants' audio and
 * sends each the mix of the others. Like MediaRooms, Janus's numbers stay here and a lost Janus
 * link loses every handle, so the state is dropped with it.
 */
export class MediaMixers {
  private readonly mixers = new Map<string, Mixer>();
  private control?: Promise<AudioBridgeHandle>;

  constructor(
    private readonly janus: JanusClient,
    private readonly events: MediaEvents,
    private readonly logger: JsonLogger,
    private readonly options: MediaMixersOptions,
  ) {
    janus.onChange((change) => {
      if (change.up) void this.cleanUp();
      else this.loseAll();
    });
  }

  private loseAll(): void {
    for (const mixer of this.mixers.values())
      for (const connectionId of mixer.participants.keys())
        this.events.publish({ kind: 'connection.ended', ...refOf(mixer), connectionId, reason: 'media-server-lost' });
    this.mixers.clear();
    this.control = undefined;
  }

  /**
   * Destroys the AudioBridge rooms an earlier agent session left in Janus, on a handle of its own
   * that is detached afterwards (the control handle is attached only once a mixer is used).
   */
  private async cleanUp(): Promise<void> {
    let handle: AudioBridgeHandle | undefined;
    try {
      handle = await this.call('list the mixers', () => this.janus.attach(AudioBridgePlugin));
      const control = handle;
      const { list } = await this.call('list the mixers', () => control.list());
      for (const leftover of list) {
        if (!leftover.description?.startsWith(DESCRIPTION_PREFIX)) continue;
        if ([...this.mixers.values()].some((m) => m.janusRoom === leftover.room)) continue;
        await this.call('destroy a leftover mixer', () =>
          control.destroy({ room: leftover.room, secret: this.secretOf(leftover.room) }),
        ).catch((e: unknown) => this.logger.event('warn', 'leftover mixer not destroyed', { error: String(e) }));
      }
    } catch (e) {
      this.logger.event('warn', 'leftover mixers not cleaned up', { error: (e as Error).message });
    } finally {
      await handle?.detach().catch(() => undefined);
    }
  }

  private secretOf(janusRoom: number): string {
    return createHmac('sha256', this.options.roomAdminKey).update(`audiobridge ${janusRoom}`).digest('base64url');
  }

  async create(cmd: Cmd<'mixer.create'>): Promise<MediaAgentResults['mixer.create']> {
    if (cmd.video) throw new DomainError('ValidationFailed', MCU_VIDEO_REFUSED);
    if (this.mixers.has(channelKey(cmd))) return { created: false };
    const janusRoom = randomInt(1, 2 ** 47);
    const mixer: Mixer = { ...refOf(cmd), janusRoom, secret: this.secretOf(janusRoom), participants: new Map() };
    await this.call('create the mixer', async () =>
      (await this.controlHandle()).create({
        room: janusRoom,
        description: DESCRIPTION_PREFIX + channelKey(cmd),
        secret: mixer.secret,
        admin_key: this.options.roomAdminKey,
        sampling_rate: 48000,
      }),
    );
    if (this.mixers.has(channelKey(cmd))) {
      void this.destroyJanusRoom(mixer);
      return { created: false };
    }
    this.mixers.set(channelKey(cmd), mixer);
    return { created: true };
  }

  async destroy(cmd: Cmd<'mixer.destroy'>): Promise<MediaAgentResults['mixer.destroy']> {
    const mixer = this.mixers.get(channelKey(cmd));
    if (!mixer) return { destroyed: false, connectionIds: [] };
    this.mixers.delete(channelKey(cmd));
    const connectionIds = [...mixer.participants.keys()];
    await Promise.all([...mixer.participants.values()].map((p) => this.end(mixer, p, 'room-destroyed')));
    await this.destroyJanusRoom(mixer);
    return { destroyed: true, connectionIds };
  }

  async join(cmd: Cmd<'mixer.join'>): Promise<MediaAgentResults['mixer.join']> {
    const mixer = this.mixerOf(cmd);
    this.assertFree(mixer, cmd.connectionId);
    const handle = await this.call('attach a handle', () => this.janus.attach(AudioBridgePlugin));
    const liveness: Liveness = { connected: false };
    watchHandle(handle, { ...refOf(mixer), connectionId: cmd.connectionId }, this.events, liveness);
    try {
      // The offer goes with the join: Janus answers it in the `joined` event.
      const joined = (await this.call('join the mixer', () =>
        handle.message(
          { request: 'join', room: mixer.janusRoom, display: cmd.display ?? cmd.connectionId, muted: false },
          cmd.offer,
        ),
      )) as { plugindata?: { data?: { id?: unknown; error?: unknown } }; jsep?: { sdp: string } };
      const data = joined.plugindata?.data;
      if (typeof data?.error === 'string') throw janusFailure('Could not join the mixer', new Error(data.error));
      if (typeof data?.id !== 'number' || !joined.jsep)
        throw new DomainError('Internal', 'Janus answered the mixer join without a participant id or SDP answer');
      this.assertFree(mixer, cmd.connectionId);
      mixer.participants.set(cmd.connectionId, { connectionId: cmd.connectionId, handle, feed: data.id, liveness });
      return { answer: { type: 'answer', sdp: joined.jsep.sdp } };
    } catch (e) {
      void handle.detach().catch(() => undefined);
      throw e;
    }
  }

  async leave(cmd: Cmd<'mixer.leave'>): Promise<MediaAgentResults['mixer.leave']> {
    const mixer = this.mixers.get(channelKey(cmd));
    const participant = mixer?.participants.get(cmd.connectionId);
    if (!mixer || !participant) return { left: false };
    await this.end(mixer, participant, 'left');
    return { left: true };
  }

  async mute(cmd: Cmd<'mixer.mute'>): Promise<MediaAgentResults['mixer.mute']> {
    const mixer = this.mixerOf(cmd);
    const found = cmd.connectionIds.flatMap((id) => mixer.participants.get(id) ?? []);
    const control = await this.call('mute', () => this.controlHandle());
    await Promise.all(
      found.map((p) =>
        this.call(cmd.muted ? 'mute' : 'unmute', () =>
          cmd.muted ? control.mute(this.feedOf(mixer, p)) : control.unmute(this.feedOf(mixer, p)),
        ),
      ),
    );
    return { muted: found.map((p) => p.connectionId) };
  }

  async kick(cmd: Cmd<'mixer.kick'>): Promise<MediaAgentResults['mixer.kick']> {
    const mixer = this.mixerOf(cmd);
    const found = cmd.connectionIds.flatMap((id) => mixer.participants.get(id) ?? []);
    await Promise.all(found.map((p) => this.end(mixer, p, 'kicked')));
    return { kicked: found.map((p) => p.connectionId) };
  }

  statsTargets(): StatsTarget[] {
    return [...this.mixers.values()].flatMap((mixer) =>
      [...mixer.participants.values()].map((p) => ({
        ...refOf(mixer),
        connectionId: p.connectionId,
        role: 'mixer' as const,
        handleId: p.handle.id,
        connected: p.liveness.connected,
      })),
    );
  }

  /** The handle of an `mcu` participant (its AudioBridge leg can be recorded), if it is here. */
  participantHandle(ref: { applicationId: string; channelId: string; connectionId: string }) {
    return this.mixers.get(channelKey(ref))?.participants.get(ref.connectionId)?.handle;
  }

  counts(): { mixers: number; connections: number } {
    let connections = 0;
    for (const mixer of this.mixers.values()) connections += mixer.participants.size;
    return { mixers: this.mixers.size, connections };
  }

  private async end(mixer: Mixer, participant: Participant, reason: 'left' | 'kicked' | 'room-destroyed') {
    mixer.participants.delete(participant.connectionId);
    if (reason === 'kicked')
      await this.call('kick', async () =>
        (await this.controlHandle()).kick({ room: mixer.janusRoom, feed: participant.feed, secret: mixer.secret }),
      ).catch((e: unknown) => this.logger.event('warn', 'AudioBridge kick failed', { error: (e as Error).message }));
    await within(participant.handle.detach(), this.options.requestTimeoutMs, 'detach').catch(() => undefined);
    this.events.publish({ kind: 'connection.ended', ...refOf(mixer), connectionId: participant.connectionId, reason });
  }

  private controlHandle(): Promise<AudioBridgeHandle> {
    if (!this.control) {
      const attaching = this.janus.attach(AudioBridgePlugin);
      this.control = attaching;
      attaching.catch(() => this.control === attaching && (this.control = undefined));
    }
    return this.control;
  }

  private async destroyJanusRoom(mixer: Mixer): Promise<void> {
    await this.call('destroy the mixer', async () =>
      (await this.controlHandle()).destroy({ room: mixer.janusRoom, secret: mixer.secret }),
    ).catch((e: unknown) => this.logger.event('warn', 'mixer not destroyed', { error: (e as Error).message }));
  }

  private async call<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await within(call(), this.options.requestTimeoutMs, 'Janus did not answer in time');
    } catch (e) {
      throw janusFailure(`Could not ${what}`, e);
    }
  }

  private feedOf(mixer: Mixer, participant: Participant) {
    return { room: mixer.janusRoom, feed: participant.feed, secret: mixer.secret };
  }

  private mixerOf(ref: ChannelRef): Mixer {
    const mixer = this.mixers.get(channelKey(ref));
    if (!mixer) throw new DomainError('NotFound', 'No mixer for the channel on this media server.');
    return mixer;
  }

  private assertFree(mixer: Mixer, connectionId: string): void {
    if (this.mixers.get(channelKey(mixer)) !== mixer)
      throw new DomainError('NotFound', 'The mixer of the channel was destroyed meanwhile.');
    if (mixer.participants.has(connectionId))
      throw new DomainError('Conflict', `Connection '${connectionId.slice(0, 256)}' is already in the mixer.`);
  }
}

function refOf(ref: ChannelRef): ChannelRef {
  return { applicationId: ref.applicationId, channelId: ref.channelId };
}
