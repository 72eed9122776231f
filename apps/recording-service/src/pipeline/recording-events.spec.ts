import { recordingEventId } from './recording-events.js';

describe('recordingEventId', () => {
  it('is a stable UUID per recording and event type', () => {
    const id = recordingEventId('0b8a7c2e-5d1f-4e3a-9b6c-1f2e3d4c5b6a', 'channel.recording.ready');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(recordingEventId('0b8a7c2e-5d1f-4e3a-9b6c-1f2e3d4c5b6a', 'channel.recording.ready')).toBe(id);
    expect(recordingEventId('0b8a7c2e-5d1f-4e3a-9b6c-1f2e3d4c5b6a', 'channel.recording.expired')).not.toBe(id);
  });
});
