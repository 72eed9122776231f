import { Injectable } from '@nestjs/common';
import { effectiveSettings } from '../model/settings.js';
import { LiveReads } from '../store/live-reads.js';
import type { MuteIntent } from './media-control-plan.js';
import type { MediaControlReads } from './media-control-run.js';

/** The media control's reads of the live model. */
@Injectable()
export class LiveMediaControlReads implements MediaControlReads {
  constructor(private readonly reads: LiveReads) {}

  channelActive(applicationId: string, channelId: string): Promise<boolean> {
    return this.reads.channelActive(applicationId, channelId);
  }

  async currentMutes(intents: MuteIntent[]): Promise<Array<{ audioMuted: boolean; videoMuted: boolean } | null>> {
    const byChannel = new Map<string, MuteIntent[]>();
    for (const intent of intents) {
      const key = `${intent.applicationId}\n${intent.channelId}`;
      byChannel.set(key, [...(byChannel.get(key) ?? []), intent]);
    }
    const found = new Map<MuteIntent, { audioMuted: boolean; videoMuted: boolean }>();
    for (const group of byChannel.values()) {
      const { applicationId, channelId } = group[0]!;
      const views = await this.reads.connections(applicationId, channelId, group);
      views.forEach((view, i) => {
        const intent = group[i]!;
        // Gone, or placed elsewhere: nothing to mute on this server.
        if (view.connection.mediaServerId !== intent.mediaServerId) return;
        const settings = effectiveSettings(view.levels, view);
        found.set(intent, { audioMuted: settings.audioMuted, videoMuted: settings.videoMuted });
      });
    }
    return intents.map((intent) => found.get(intent) ?? null);
  }
}
