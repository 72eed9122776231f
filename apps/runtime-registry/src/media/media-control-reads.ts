import { Injectable } from '@nestjs/common';
import type { EffectiveSettings } from '@switchboard/contracts';
import { effectiveSettings } from '../model/settings.js';
import { LiveReads } from '../store/live-reads.js';
import type { ConnectionRef, MuteIntent, RecordIntent } from './media-control-plan.js';
import type { MediaControlReads } from './media-control-run.js';

/** The media control's reads of the live model. */
@Injectable()
export class LiveMediaControlReads implements MediaControlReads {
  constructor(private readonly reads: LiveReads) {}

  channelActive(applicationId: string, channelId: string): Promise<boolean> {
    return this.reads.channelActive(applicationId, channelId);
  }

  async currentMutes(intents: MuteIntent[]): Promise<Array<{ audioMuted: boolean; videoMuted: boolean } | null>> {
    const settings = await this.currentSettings(intents);
    return settings.map((s) => (s ? { audioMuted: s.audioMuted, videoMuted: s.videoMuted } : null));
  }

  async currentRecording(intents: RecordIntent[]): Promise<Array<boolean | null>> {
    return (await this.currentSettings(intents)).map((s) => (s ? s.recording : null));
  }

  /** The effective settings of connections now; null for one gone or placed on another server. */
  private async currentSettings(intents: ConnectionRef[]): Promise<Array<EffectiveSettings | null>> {
    const byChannel = new Map<string, ConnectionRef[]>();
    for (const intent of intents) {
      const key = `${intent.applicationId}\n${intent.channelId}`;
      byChannel.set(key, [...(byChannel.get(key) ?? []), intent]);
    }
    const found = new Map<ConnectionRef, EffectiveSettings>();
    for (const group of byChannel.values()) {
      const { applicationId, channelId } = group[0]!;
      const views = await this.reads.connections(applicationId, channelId, group);
      views.forEach((view, i) => {
        const intent = group[i]!;
        // Gone, or placed elsewhere: nothing to do on this server.
        if (view.connection.mediaServerId !== intent.mediaServerId) return;
        found.set(intent, effectiveSettings(view.levels, view));
      });
    }
    return intents.map((intent) => found.get(intent) ?? null);
  }
}
