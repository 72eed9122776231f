import path from 'node:path';
import type { Provider } from '@nestjs/common';
import { JsonLogger, NatsClient } from '@switchboard/service-kit';
import type { MediaAgentConfig } from '../config.js';
import type { JanusClient } from '../janus/janus-client.js';
import { MEDIA_EVENTS, MEDIA_MIXERS, MEDIA_ROOMS } from '../rooms/media-commands.rpc.js';
import type { MediaEvents } from '../rooms/media-events.js';
import type { MediaMixers } from '../rooms/media-mixers.js';
import type { MediaRooms } from '../rooms/media-rooms.js';
import { MEDIA_RECORDINGS, MediaRecordings } from './media-recordings.js';
import { MjrConverter } from './mjr-convert.js';
import { RecordingHandover } from './recording-handover.js';
import { RecordingDirectory } from './recording-manifest.js';
import { RecordingStore } from './recording-store.js';

/** The recording part of the agent (`connection.record`), built from its settings. */
export function recordingProviders(config: MediaAgentConfig, janus: JanusClient): Provider[] {
  const dir = path.resolve(config.mediaRecordingsDir ?? path.join(config.mediaAgentDataDir, 'recordings'));
  return [
    {
      provide: MEDIA_RECORDINGS,
      inject: [MEDIA_ROOMS, MEDIA_MIXERS, MEDIA_EVENTS, NatsClient, JsonLogger],
      useFactory: (
        rooms: MediaRooms,
        mixers: MediaMixers,
        events: MediaEvents,
        nats: NatsClient,
        logger: JsonLogger,
      ) => {
        const directory = new RecordingDirectory(dir);
        const store = new RecordingStore(nats, config.natsNamespace, config.janusRequestTimeoutMs * 2);
        const converter = new MjrConverter({
          janusPpRecPath: config.janusPpRecPath,
          ffmpegPath: config.ffmpegPath,
          timeoutMs: 120000,
        });
        const handover = new RecordingHandover(directory, store, converter, logger, {
          handoverTimeoutMs: config.mediaRecordingHandoverTimeoutMs,
        });
        return new MediaRecordings(janus, { rooms, mixers }, events, directory, handover, logger, {
          janusDir: config.janusRecordingsDir ?? dir,
          requestTimeoutMs: config.janusRequestTimeoutMs,
          shutdownHandoverMs: Math.max(500, config.shutdownTimeoutMs - 1000),
        });
      },
    },
  ];
}
