/**
 * media-agent when its Janus or itself fails, with a publisher flowing: Janus killed ends every
 * connection and room with events; an agent restarted destroys the rooms its crashed predecessor
 * left in Janus, so no orphan room stays. Real Janus, agent, NATS and a werift client in the media
 * network namespace.
 */
import { waitFor } from '@switchboard/testing';
import { startMediaStack, type MediaStack } from '../../tools/testing/media-stack.js';
import { connected, TestPublisher } from '../../tools/testing/webrtc-client.js';

const channel = { applicationId: 'app-recovery', channelId: 'room-r' };

describe('media-agent recovery', () => {
  let stack: MediaStack;
  const clients: TestPublisher[] = [];

  beforeAll(async () => {
    stack = await startMediaStack({ JANUS_RECONNECT_MIN_MS: '50', JANUS_RECONNECT_MAX_MS: '200' });
  }, 30000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await stack?.stop();
  });

  async function publish(connectionId: string): Promise<void> {
    const publisher = new TestPublisher();
    clients.push(publisher);
    const offer = await publisher.offer();
    const { answer } = await stack.command({ kind: 'publisher.join', ...channel, connectionId, offer });
    await publisher.accept(answer);
    await connected(publisher.pc);
    publisher.start();
  }

  it('reports every connection and room ended when Janus is killed, and takes rooms again once it is back', async () => {
    expect(await stack.command({ kind: 'room.create', ...channel })).toEqual({ created: true });
    await publish('pub-1');
    const killedAt = Date.now();
    await stack.janus.kill('SIGKILL');
    await waitFor(() => stack.events.some((e) => e.kind === 'room.ended'), { description: 'room.ended' });
    expect(Date.now() - killedAt).toBeLessThan(2000);
    expect(stack.events.filter((e) => e.kind === 'connection.ended' || e.kind === 'room.ended')).toEqual([
      { kind: 'connection.ended', ...channel, connectionId: 'pub-1', reason: 'media-server-lost' },
      { kind: 'room.ended', ...channel, reason: 'media-server-lost' },
    ]);

    await stack.janus.restart();
    const created = await waitFor(() => stack.command({ kind: 'room.create', ...channel }).then((r) => r.created), {
      timeoutMs: 5000,
      description: 'a room on the restarted Janus',
    });
    expect(created).toBe(true);
  });

  it('a restarted agent destroys the rooms its crashed predecessor left in Janus', async () => {
    await publish('pub-2');
    expect(await stack.janusRooms()).toHaveLength(1);
    stack.events.length = 0;
    await stack.restartAgent();
    await waitFor(async () => (await stack.janusRooms()).length === 0, { description: 'the leftover room destroyed' });
    expect(stack.events).toContainEqual({ kind: 'room.ended', ...channel, reason: 'cleaned-up' });
    // The channel starts afresh on the new agent.
    expect(await stack.command({ kind: 'room.create', ...channel })).toEqual({ created: true });
    await publish('pub-3');
  });
});
