/**
 * `mcu` audio through the AudioBridge (run in the media network namespace by
 * media-plane.integration-spec.ts): two werift participants sending a real Opus tone each receive
 * the mix; a participant muted at the mixer no longer reaches the other; `mcu` video is refused.
 */
import { waitFor } from '@switchboard/testing';
import { opusToneFrames } from '../../tools/testing/media-opus.js';
import { startMediaStack, type MediaStack } from '../../tools/testing/media-stack.js';
import { connected, TestMixerParticipant } from '../../tools/testing/webrtc-client.js';

const channel = { applicationId: 'app-mcu', channelId: 'mixer-1' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('media-agent AudioBridge mixers with real Janus and WebRTC clients', () => {
  let stack: MediaStack;
  const participants = new Map<string, TestMixerParticipant>();

  /** The level (RMS) of the mix `id` receives (decoded) over `ms`: the others' tone, or silence. */
  async function levelAt(id: string, ms: number): Promise<number> {
    const participant = participants.get(id)!;
    const before = { ...participant.received };
    await sleep(ms);
    return Math.round(participant.rmsSince(before));
  }

  /** Audio bytes `id` receives in `ms`. */
  async function bytesIn(id: string, ms: number): Promise<number> {
    const before = participants.get(id)!.received.audioBytes;
    await sleep(ms);
    return participants.get(id)!.received.audioBytes - before;
  }

  beforeAll(async () => {
    stack = await startMediaStack();
  }, 30000);

  afterAll(async () => {
    await Promise.all([...participants.values()].map((p) => p.close().catch(() => undefined)));
    await stack?.stop();
  });

  it('refuses mcu video, naming the reason', async () => {
    await expect(stack.command({ kind: 'mixer.create', ...channel, video: true })).rejects.toMatchObject({
      code: 'ValidationFailed',
      message: expect.stringContaining('Janus mixes audio only'),
    });
  });

  it('mixes: each participant receives the other, a muted one leaves the mix, unmute brings it back', async () => {
    expect(await stack.command({ kind: 'mixer.create', ...channel })).toEqual({ created: true });
    expect(await stack.command({ kind: 'mixer.create', ...channel })).toEqual({ created: false });
    const tone = opusToneFrames();
    for (const id of ['alice', 'bob']) {
      const participant = new TestMixerParticipant();
      participants.set(id, participant);
      const { answer } = await stack.command({
        kind: 'mixer.join',
        ...channel,
        connectionId: id,
        offer: await participant.offer(),
      });
      await participant.accept(answer);
      await connected(participant.pc);
      participant.start(tone);
    }
    await waitFor(() => [...participants.values()].every((p) => p.received.audioPackets > 25), {
      timeoutMs: 5000,
      description: 'mixed audio at both participants',
    });
    const [aliceHearsBob, bobHearsAlice] = await Promise.all([levelAt('alice', 1000), levelAt('bob', 1000)]);
    expect(aliceHearsBob).toBeGreaterThan(500);
    expect(bobHearsAlice).toBeGreaterThan(500);

    expect(await stack.command({ kind: 'mixer.mute', ...channel, connectionIds: ['alice'], muted: true })).toEqual({
      muted: ['alice'],
    });
    await sleep(300);
    const [bobHearsMutedAlice, aliceStillHearsBob] = await Promise.all([levelAt('bob', 1000), levelAt('alice', 1000)]);
    process.stdout.write(
      `mix level (RMS): alice hears bob ${aliceHearsBob}, bob hears alice ${bobHearsAlice}, ` +
        `muted ${bobHearsMutedAlice}, alice still hears bob ${aliceStillHearsBob}\n`,
    );
    // The tone is gone from bob's mix (silence is left), while alice still hears bob.
    expect(bobHearsMutedAlice).toBeLessThan(bobHearsAlice / 10);
    expect(aliceStillHearsBob).toBeGreaterThan(aliceHearsBob / 2);

    await stack.command({ kind: 'mixer.mute', ...channel, connectionIds: ['alice'], muted: false });
    await sleep(300);
    expect(await levelAt('bob', 1000)).toBeGreaterThan(bobHearsAlice / 2);
  });

  it('kicks a participant (its media ends) and destroys the mixer, freeing every handle', async () => {
    const handlesBefore = await stack.janusHandles();
    expect(await stack.command({ kind: 'mixer.kick', ...channel, connectionIds: ['bob', 'nobody'] })).toEqual({
      kicked: ['bob'],
    });
    await waitFor(() => stack.events.some((e) => e.kind === 'connection.ended' && e.connectionId === 'bob'));
    await sleep(300);
    expect(await bytesIn('bob', 500)).toBe(0);
    expect(await stack.janusHandles()).toBe(handlesBefore - 1);
    expect(await stack.command({ kind: 'mixer.destroy', ...channel })).toEqual({
      destroyed: true,
      connectionIds: ['alice'],
    });
    expect(await stack.command({ kind: 'mixer.leave', ...channel, connectionId: 'alice' })).toEqual({ left: false });
    await waitFor(async () => (await stack.janusHandles()) === handlesBefore - 2, { description: 'handles freed' });
  });
});
