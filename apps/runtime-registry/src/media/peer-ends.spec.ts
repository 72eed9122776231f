import type { MediaDomainEvent } from './media-control-context.js';
import { PeerEnds } from './peer-ends.js';
import type { PeerReads } from '../runtime/peer-relay.js';

const APP = 'app-peers';
const CHANNEL = 'room';

/** A channel holding these peer connections (id → the connection it names). */
function channelWith(peers: Record<string, string>): PeerReads {
  const paths = Object.keys(peers).map((connectionId) => ({
    userId: `u-${connectionId}`,
    deviceId: 'd',
    clientId: 'c',
    connectionId,
  }));
  return {
    channelConnections: () => Promise.resolve(paths),
    connections: (_app: string, _channel: string, asked: typeof paths) =>
      Promise.resolve(
        asked.map((path) => ({
          ...path,
          connection: { type: 'peer', state: 'connected', remoteConnectionId: peers[path.connectionId]! },
          registration: {},
          levels: { ch: {}, u: {}, d: {}, c: {}, n: {} },
        })),
      ),
    gatewaysOf: () => Promise.resolve([]),
  };
}

function ended(
  type: string,
  connection: { id: string; type: string; remoteConnectionId: string | null },
  origin = 'client',
) {
  return {
    applicationId: APP,
    event: { type, origin, connection: { ...connection, channelId: CHANNEL } },
  } as unknown as MediaDomainEvent;
}

describe('PeerEnds: the other side of an ended peer connection', () => {
  const run = async (peers: Record<string, string>, events: MediaDomainEvent[]) => {
    const closed: Array<[string, string]> = [];
    const media = {
      remotePeerEnded: (_app: string, ref: { connectionId: string }, reason: string) => {
        closed.push([ref.connectionId, reason]);
        return Promise.resolve('applied' as const);
      },
    };
    await new PeerEnds(channelWith(peers), media).settle(events);
    return closed;
  };

  it('closes the connection naming the ended one back: remote-left, or remote-kicked after a kick of interface A', async () => {
    const peers = { bob: 'alice' };
    expect(
      await run(peers, [ended('connection.closed', { id: 'alice', type: 'peer', remoteConnectionId: 'bob' })]),
    ).toEqual([['bob', 'remote-left']]);
    expect(
      await run(peers, [ended('connection.closed', { id: 'alice', type: 'peer', remoteConnectionId: 'bob' }, 'api')]),
    ).toEqual([['bob', 'remote-kicked']]);
    expect(
      await run(peers, [ended('connection.failed', { id: 'alice', type: 'peer', remoteConnectionId: 'bob' })]),
    ).toEqual([['bob', 'remote-left']]);
  });

  it('leaves alone a remote naming another connection, other events, and connections that are not peers', async () => {
    const peers = { bob: 'carol', dave: 'erin' };
    expect(
      await run(peers, [
        ended('connection.closed', { id: 'alice', type: 'peer', remoteConnectionId: 'bob' }),
        ended('connection.closed', { id: 'frank', type: 'peer', remoteConnectionId: 'nobody' }),
        ended('connection.connected', { id: 'erin', type: 'peer', remoteConnectionId: 'dave' }),
        ended('connection.closed', { id: 'erin', type: 'sfu', remoteConnectionId: 'dave' }),
      ]),
    ).toEqual([]);
  });
});
