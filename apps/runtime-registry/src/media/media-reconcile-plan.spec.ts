import type { MediaRoomListing } from '@switchboard/contracts';
import { reconcileDecisions, type HeldConnection } from './media-reconcile-plan.js';

const NOW = 100_000;
const GRACE = 5000;

function held(connectionId: string, extra: Partial<HeldConnection> = {}): HeldConnection {
  return {
    applicationId: 'app',
    channelId: 'ch',
    userId: 'u',
    deviceId: 'd',
    clientId: 'c',
    connectionId,
    type: 'sfu',
    state: 'connected',
    openedAt: NOW - 60_000,
    connectedAt: NOW - 59_000,
    ...extra,
  };
}

function room(channelId: string, ...connectionIds: string[]): MediaRoomListing {
  return {
    applicationId: 'app',
    channelId,
    connections: connectionIds.map((connectionId) => ({ connectionId, role: 'publisher' as const })),
  };
}

describe('media reconciliation decisions', () => {
  it('leaves the Janus connections the registry does not hold, or holds as ended', () => {
    const d = reconcileDecisions(
      [room('ch', 'a', 'gone', 'closed')],
      [held('a'), held('closed', { state: 'closed' })],
      NOW,
      GRACE,
    );
    expect(d.leave).toEqual([
      { applicationId: 'app', channelId: 'ch', connectionId: 'gone' },
      { applicationId: 'app', channelId: 'ch', connectionId: 'closed' },
    ]);
    expect(d.destroy).toEqual([]);
    expect(d.fail).toEqual([]);
  });

  it('destroys the rooms of channels without a live registry connection on the server', () => {
    const d = reconcileDecisions([room('empty'), room('stale', 'x'), room('ch', 'a')], [held('a')], NOW, GRACE);
    expect(d.destroy).toEqual([
      { applicationId: 'app', channelId: 'empty' },
      { applicationId: 'app', channelId: 'stale' },
    ]);
    expect(d.leave).toEqual([]);
  });

  it('fails connected sfu connections Janus lost, sparing young ones, mcu ones and those not connected', () => {
    const d = reconcileDecisions(
      [room('ch', 'a')],
      [
        held('a'),
        held('lost'),
        held('young', { connectedAt: NOW - 1000 }),
        held('mixed', { type: 'mcu' }),
        held('joining', { state: 'connecting', connectedAt: null }),
        held('other-channel', { channelId: 'nowhere' }),
      ],
      NOW,
      GRACE,
    );
    expect(d.fail.map((c) => c.connectionId)).toEqual(['lost', 'other-channel']);
  });
});
