import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  MediaAgentSubjects,
  parseMediaAgentCommand,
  type MediaAgentCommand,
  type MediaAgentResults,
} from '@switchboard/contracts';
import { MEDIA_RECORDINGS, type MediaRecordings } from '../recording/media-recordings.js';
import { MediaMixers } from './media-mixers.js';
import { MediaRooms } from './media-rooms.js';

export const MEDIA_ROOMS = Symbol('MEDIA_ROOMS');
export const MEDIA_MIXERS = Symbol('MEDIA_MIXERS');
export const MEDIA_EVENTS = Symbol('MEDIA_EVENTS');

/**
 * `media-agent.v1.<mediaServerId>.command` (messaging/media.ts): the control plane's commands for
 * the rooms and connections on this agent's Janus. The subject names this server, so it is bound
 * when the module is built (`bindMediaCommands`), not in a decorator.
 */
@Controller()
export class MediaCommandsRpc {
  constructor(
    @Inject(MEDIA_ROOMS) private readonly rooms: MediaRooms,
    @Inject(MEDIA_MIXERS) private readonly mixers: MediaMixers,
    @Inject(MEDIA_RECORDINGS) private readonly recordings: MediaRecordings,
  ) {}

  async command(@Payload() body: unknown): Promise<MediaAgentResults[keyof MediaAgentResults]> {
    return this.run(parseMediaAgentCommand(body));
  }

  private run(command: MediaAgentCommand): Promise<MediaAgentResults[keyof MediaAgentResults]> {
    switch (command.kind) {
      case 'room.create':
        return this.rooms.createRoom(command);
      case 'rooms.list':
        return this.rooms.listRooms();
      case 'room.destroy':
        return this.rooms.destroyRoom(command);
      case 'publisher.join':
        return this.rooms.joinPublisher(command);
      case 'subscriber.join':
        return this.rooms.joinSubscriber(command);
      case 'subscriber.answer':
        return this.rooms.answerSubscriber(command);
      case 'connection.trickle':
        return this.rooms.trickle(command);
      case 'connection.leave':
        return this.rooms.leave(command);
      case 'connections.moderate':
        // Janus confirmed: the media changed now (a recording's timeline takes this time).
        return this.rooms.moderate(command).then((result) => {
          this.recordings.moderated(command, command, result.moderated, Date.now());
          return result;
        });
      case 'connections.kick':
        return this.rooms.kick(command);
      case 'mixer.create':
        return this.mixers.create(command);
      case 'mixer.destroy':
        return this.mixers.destroy(command);
      case 'mixer.join':
        return this.mixers.join(command);
      case 'mixer.leave':
        return this.mixers.leave(command);
      case 'mixer.mute':
        return this.mixers.mute(command).then((result) => {
          this.recordings.moderated(command, { audioMuted: command.muted }, result.muted, Date.now());
          return result;
        });
      case 'mixer.kick':
        return this.mixers.kick(command);
      case 'connection.record':
        return this.recordings.record(command);
    }
  }
}

/** Binds the command handler to this server's subject. */
export function bindMediaCommands(mediaServerId: string): void {
  const proto = MediaCommandsRpc.prototype;
  MessagePattern(MediaAgentSubjects.command(mediaServerId))(
    proto,
    'command',
    Object.getOwnPropertyDescriptor(proto, 'command')!,
  );
}
