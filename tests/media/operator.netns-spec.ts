/**
 * What an operator does through interface A reaches the media itself: a mute with unmuting disabled
 * stops the stream at Janus and the client cannot resume it; a kick at each of the five levels
 * ends the kicked client's media, and its receivers are told (issue 22, "What it must show").
 */
import { waitFor } from '@switchboard/testing';
import { MediaSessionStack, type MediaParticipant } from '../../tools/testing/media-session-stack.js';
import type { TestSubscriber } from '../../tools/testing/webrtc-client.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether packets of a kind keep arriving at a subscriber over `ms`. */
async function flowing(subscriber: TestSubscriber, kind: 'audio' | 'video', ms = 700): Promise<boolean> {
  const field = kind === 'audio' ? 'audioPackets' : 'videoPackets';
  const before = subscriber.received[field];
  await sleep(ms);
  return subscriber.received[field] > before;
}

describe('operator actions of interface A in the media', () => {
  const stack = new MediaSessionStack();
  const path = (channelId: string, user: string) =>
    `/applications/${stack.applicationId}/channels/${channelId}/users/${user}`;
  const connectionPath = (channelId: string, user: string, connectionId: string) =>
    `${path(channelId, user)}/devices/${user}-device/clients/${user}-client/connections/${connectionId}`;

  beforeAll(async () => {
    await stack.start();
  }, 60000);

  afterAll(async () => {
    await stack.stop();
  });

  it('a mute with unmuting disabled stops the audio at Janus; the client cannot resume it; the operator can', async () => {
    const channel = 'muted-call';
    const alice = await stack.participant('alice', channel);
    const watcher = await stack.participant('watcher', channel);
    await alice.publish('alice-up');
    const fromAlice = await watcher.subscribe('watcher-from-alice', 'alice-up');
    await waitFor(() => fromAlice.received.audioPackets > 10, { description: "alice's audio at the watcher" });

    const muted = Date.now();
    await stack.a('PATCH', connectionPath(channel, 'alice', 'alice-up'), {
      audioMuted: true,
      audioUnmuteDisabled: true,
    });
    await waitFor(() => fromAlice.received.lastAudioAt < Date.now() - 300, {
      timeoutMs: 1500,
      description: "alice's audio stopped at the watcher",
    });
    expect(fromAlice.received.lastAudioAt - muted).toBeLessThan(1000);
    await expect(
      alice.request('connection.update', { connectionId: 'alice-up', localAudioMuted: false }),
    ).rejects.toMatchObject({ code: 'UnmuteDisabled' });
    expect(await flowing(fromAlice, 'audio')).toBe(false);
    expect(await flowing(fromAlice, 'video')).toBe(true);

    await stack.a('PATCH', connectionPath(channel, 'alice', 'alice-up'), {
      audioMuted: false,
      audioUnmuteDisabled: false,
    });
    await waitFor(() => fromAlice.received.lastAudioAt > Date.now() - 200, {
      timeoutMs: 3000,
      description: "alice's audio back at the watcher",
    });
  }, 40000);

  it('a kick at each of the five levels ends the kicked media, and the receivers are told', async () => {
    const channel = 'kicks';
    const levels = ['user', 'device', 'client', 'connection'] as const;
    const watcher = await stack.participant('kick-watcher', channel);
    const publishers = new Map<string, MediaParticipant>();
    const received = new Map<string, TestSubscriber>();
    for (const level of [...levels, 'channel']) {
      const publisher = await stack.participant(`by-${level}`, channel);
      publishers.set(level, publisher);
      await publisher.publish(`by-${level}-up`);
      received.set(level, await watcher.subscribe(`watch-${level}`, `by-${level}-up`));
    }
    await waitFor(() => [...received.values()].every((s) => s.received.videoPackets > 5), {
      description: 'every publisher at the watcher',
    });

    const user = (level: string) => `by-${level}`;
    const kickPaths: Record<(typeof levels)[number], string> = {
      user: path(channel, user('user')),
      device: `${path(channel, user('device'))}/devices/${user('device')}-device`,
      client: `${path(channel, user('client'))}/devices/${user('client')}-device/clients/${user('client')}-client`,
      connection: connectionPath(channel, user('connection'), 'by-connection-up'),
    };
    for (const level of levels) {
      await stack.a('DELETE', kickPaths[level]);
      const publisher = publishers.get(level)!;
      await waitFor(() => publisher.pushesOf('kicked').length > 0, { description: `the ${level} kick pushed` });
      await waitFor(
        () => watcher.pushesOf('connection.ended', `watch-${level}`).some((p) => p.reason === 'remote-kicked'),
        { timeoutMs: 5000, description: `the watcher told of the ${level} kick` },
      );
      expect(await flowing(received.get(level)!, 'video')).toBe(false);
    }
    // The others still flow until the channel kick, which ends everyone's and the room.
    expect(await flowing(received.get('channel')!, 'video')).toBe(true);
    const roomOfChannel = async () =>
      (await stack.media.janusRooms()).some((room) => room.description?.includes(`"${channel}"`));
    expect(await roomOfChannel()).toBe(true);
    await stack.a('DELETE', `/applications/${stack.applicationId}/channels/${channel}`);
    await waitFor(() => watcher.pushesOf('kicked').some((p) => !p.connectionId), {
      description: 'the watcher kicked out of the channel',
    });
    expect(publishers.get('channel')!.pushesOf('kicked').length).toBeGreaterThan(0);
    await waitFor(async () => !(await roomOfChannel()), {
      timeoutMs: 5000,
      description: "the channel's room destroyed in Janus",
    });
  }, 60000);
});
