import { WebhookValidators } from '@switchboard/contracts';
import type { ChannelRecordingRow, ConnectionRecordingRow } from '../recordings/rows.js';
import { readyEvents, recordingEventId } from './recording-events.js';

describe('recordingEventId', () => {
  it('is a stable UUID per recording and event type', () => {
    const id = recordingEventId('0b8a7c2e-5d1f-4e3a-9b6c-1f2e3d4c5b6a', 'channel.recording.ready');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(recordingEventId('0b8a7c2e-5d1f-4e3a-9b6c-1f2e3d4c5b6a', 'channel.recording.ready')).toBe(id);
    expect(recordingEventId('0b8a7c2e-5d1f-4e3a-9b6c-1f2e3d4c5b6a', 'channel.recording.expired')).not.toBe(id);
  });
});

describe('readyEvents', () => {
  const STAGE_CHANGED = 1_790_000_000_123;
  const recording = {
    id: '0b8a7c2e-5d1f-4e3a-9b6c-1f2e3d4c5b6a',
    organization_id: 'org',
    application_id: 'app',
    channel_id: 'ch',
    start_timestamp: '1789999990000',
    stop_timestamp: '1789999995000',
    expiry_timestamp: null,
    has_audio: true,
    has_video: true,
    ready: true,
    audio_ready: true,
    video_ready: true,
    file_name: 'ch.mp4',
    audio_file_name: 'ch.ogg',
    video_file_name: 'ch.webm',
    stage: 'ready',
    stage_changed_on: String(STAGE_CHANGED),
  } as unknown as ChannelRecordingRow;
  const child = (id: string, userId: string, audio: boolean, video: boolean) =>
    ({
      id,
      channel_recording_id: recording.id,
      organization_id: 'org',
      application_id: 'app',
      channel_id: 'ch',
      user_id: userId,
      device_id: 'd',
      client_id: 'c',
      connection_id: `${userId}-cam`,
      connection_type: 'sfu',
      connection_tag: null,
      tag: null,
      start_timestamp: '1789999990000',
      stop_timestamp: '1789999995000',
      has_audio: audio,
      has_video: video,
      audio_ready: audio,
      video_ready: video,
      audio_muted: false,
      video_muted: false,
      audio_disabled: false,
      video_disabled: false,
      audio_file_name: audio ? 'a.ogg' : null,
      video_file_name: video ? 'v.webm' : null,
      connection: null,
    }) as unknown as ConnectionRecordingRow;
  const children = [
    child('1d2c3b4a-0000-4000-8000-000000000001', 'alice', true, true),
    child('1d2c3b4a-0000-4000-8000-000000000002', 'bob', true, false),
  ];
  const urls = {
    channel: () => ({ url: 'u', audioUrl: 'a', videoUrl: 'v' }),
    connection: () => ({ audioUrl: 'a', videoUrl: null }),
  };

  it('stamps every event of the ready moment with the time of its stage change, however the clock moves while they are built', () => {
    const real = Date.now;
    let ticks = 0;
    Date.now = () => real() + ++ticks;
    let events;
    try {
      events = readyEvents(recording, children, urls);
    } finally {
      Date.now = real;
    }
    expect(events.map((e) => [e.event.type, e.event.connection?.userId ?? null])).toEqual([
      ['channel.recording.ready', null],
      ['channel.recording.audio.ready', null],
      ['channel.recording.video.ready', null],
      ['connection.recording.audio.ready', 'alice'],
      ['connection.recording.video.ready', 'alice'],
      ['connection.recordings.ready', 'alice'],
      ['connection.recording.audio.ready', 'bob'],
      ['connection.recordings.ready', 'bob'],
    ]);
    expect(events.map((e) => e.event.timestamp)).toEqual(events.map(() => STAGE_CHANGED));
    for (const e of events)
      expect({ type: e.event.type, errors: WebhookValidators.EventInfo.errors(e.event) }).toEqual({
        type: e.event.type,
        errors: [],
      });
  });
});
