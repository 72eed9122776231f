/// <reference lib="dom" />
/**
 * The demo room (apps/demo-room) in the system's headless Chromium, three pages in one room against
 * the whole control plane and a real Janus: each decodes the other two's video, chat reaches the
 * others, an operator's mute and kick through interface A reach the page and the others, and a
 * gateway restarted mid-call is survived without joining again by hand (issue 23).
 */
import type { Browser, Page } from 'playwright-core';
import { freePort, serviceTestEnv, spawnService, type SpawnedService } from '@switchboard/testing';
import { launchChromium } from '../../tools/testing/chromium.js';
import { MediaSessionStack } from '../../tools/testing/media-session-stack.js';

const ROOM = 'demo-room-1';
const NAMES = ['Ann', 'Björn', 'Chiara'] as const;
const CHROMIUM_FLAGS = [
  '--use-fake-device-for-media-stream',
  '--use-fake-ui-for-media-stream',
  '--disable-features=WebRtcHideLocalIpsWithMdns',
  '--autoplay-policy=no-user-gesture-required',
];
const WAIT = { timeout: 20000, polling: 100 };

interface RemoteTileState {
  clientId: string;
  connectionId: string;
  name: string;
  framesDecoded: number;
  videoBytes: number;
  audioBytes: number;
  audioMuted: string;
}

/** In the page: the remote tiles as the page shows them (name, counters the page read from getStats). */
function readTiles(): RemoteTileState[] {
  return [...document.querySelectorAll<HTMLElement>('.tile[data-remote-connection-id]')].map((tile) => ({
    clientId: tile.dataset.clientId ?? '',
    connectionId: tile.dataset.connectionId ?? '',
    name: tile.querySelector('.name')?.textContent ?? '',
    framesDecoded: Number(tile.dataset.framesDecoded ?? 0),
    videoBytes: Number(tile.dataset.videoBytes ?? 0),
    audioBytes: Number(tile.dataset.audioBytes ?? 0),
    audioMuted: tile.dataset.audioMuted ?? '',
  }));
}

/** In the page: the session's ids, from the SDK client the page exposes. */
function sessionIds() {
  const { client } = (window as unknown as { demoRoom: { client: { session?: Record<string, string> } } }).demoRoom;
  const session = client.session!;
  return { userId: session.userId!, deviceId: session.deviceId!, clientId: session.clientId! };
}

/** Resolves once the page shows `count` remote tiles, each with decoded frames beyond `after`. */
async function decodingTiles(page: Page, count: number, after: Record<string, number> = {}): Promise<void> {
  await page.waitForFunction(
    ({ count, after }) => {
      const tiles = [...document.querySelectorAll<HTMLElement>('.tile[data-remote-connection-id]')];
      return (
        tiles.length === count &&
        tiles.every((tile) => Number(tile.dataset.framesDecoded ?? 0) > (after[tile.dataset.clientId ?? ''] ?? 0))
      );
    },
    { count, after },
    WAIT,
  );
}

async function chatLog(page: Page): Promise<string> {
  return (await page.locator('#chat-log').textContent()) ?? '';
}

describe('the demo room in Chromium: three pages in one room', () => {
  const stack = new MediaSessionStack();
  let demoRoom: SpawnedService;
  let browser: Browser;
  const pages: Page[] = [];
  const ids: Array<{ userId: string; deviceId: string; clientId: string }> = [];
  const userPath = (userId: string) => `/applications/${stack.applicationId}/channels/${ROOM}/users/${userId}`;

  beforeAll(async () => {
    await Promise.all([stack.start(), launchChromium(CHROMIUM_FLAGS).then((launched) => (browser = launched))]);
    demoRoom = await spawnService('demo-room', {
      ...serviceTestEnv(stack.namespace, stack.db.url),
      HTTP_PORT: String(await freePort()),
      DEMO_MANAGEMENT_URL: stack.management.url!,
      DEMO_API_KEY: stack.operatorKey,
      DEMO_APPLICATION_ID: stack.applicationId,
      DEMO_SYNC_URL: `${stack.gateway.url!.replace('http', 'ws')}/sync`,
    });
  }, 90000);

  afterAll(async () => {
    await browser?.close();
    await demoRoom?.stop();
    await stack.stop();
  });

  it('each page decodes the video of the other two, shown with their names and who is talking', async () => {
    for (const name of NAMES) {
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${demoRoom.url!}/?name=${encodeURIComponent(name)}&room=${ROOM}`);
      await page.waitForFunction(
        () => document.getElementById('status')?.textContent?.startsWith('Connected'),
        undefined,
        WAIT,
      );
      pages.push(page);
      ids.push(await page.evaluate(sessionIds));
    }
    for (const [index, page] of pages.entries()) {
      await decodingTiles(page, 2);
      const tiles = await page.evaluate(readTiles);
      const others = ids.filter((_, other) => other !== index).map((id) => id.clientId);
      expect(tiles.map((tile) => tile.clientId).sort()).toEqual([...others].sort());
      expect(tiles.map((tile) => tile.name).sort()).toEqual(NAMES.filter((_, other) => other !== index).sort());
    }
    // Chromium's fake microphone beeps: the receiving page marks the tile as talking (its audio level).
    await pages[0]!.waitForFunction(
      () => document.querySelector('.tile.talking .state')?.textContent?.includes('talking'),
      undefined,
      WAIT,
    );
  }, 60000);

  it('a chat message from one page shows on the other two', async () => {
    await pages[0]!.fill('#chat-input', 'hello from Ann 👋');
    await pages[0]!.click('#chat-form button');
    for (const page of pages.slice(1)) {
      await page.waitForFunction(
        () => document.getElementById('chat-log')?.textContent?.includes('Ann: hello from Ann 👋'),
        undefined,
        WAIT,
      );
    }
    expect(await chatLog(pages[0]!)).toContain('Ann (you): hello from Ann 👋');
  }, 30000);

  it('survives a gateway restart mid-call: same clients, media flows again, chat works after', async () => {
    const before = await Promise.all(pages.map((page) => page.evaluate(readTiles)));
    const port = new URL(stack.gateway.url!).port;
    await stack.gateway.stop();
    stack.gateway = await spawnService('admin-gateway', {
      ...serviceTestEnv(stack.namespace, stack.db.url),
      HTTP_PORT: port,
    });
    for (const [index, page] of pages.entries()) {
      // New downstream connections (the session was restored), decoding again.
      const old = new Set(before[index]!.map((tile) => tile.connectionId));
      await page.waitForFunction(
        (old) => {
          const tiles = [...document.querySelectorAll<HTMLElement>('.tile[data-remote-connection-id]')];
          return (
            tiles.length === 2 &&
            tiles.every((tile) => !old.includes(tile.dataset.connectionId!) && Number(tile.dataset.framesDecoded) > 0)
          );
        },
        [...old],
        { ...WAIT, timeout: 30000 },
      );
      expect(await page.evaluate(sessionIds)).toEqual(ids[index]);
      expect(await page.locator('#status').textContent()).toContain('Session restored');
    }
    await pages[1]!.fill('#chat-input', 'still here');
    await pages[1]!.click('#chat-form button');
    for (const page of [pages[0]!, pages[2]!]) {
      await page.waitForFunction(
        () => document.getElementById('chat-log')?.textContent?.includes('Björn: still here'),
        undefined,
        WAIT,
      );
    }
  }, 60000);

  it("a server message through interface A shows on every page as the operator's", async () => {
    await stack.a('POST', `/applications/${stack.applicationId}/channels/${ROOM}/message`, {
      message: 'The room closes in 5 minutes.',
    });
    for (const page of pages) {
      await page.waitForFunction(
        () =>
          document
            .getElementById('operator-log')
            ?.textContent?.includes('Message from the operator: The room closes in 5 minutes.'),
        undefined,
        WAIT,
      );
    }
  }, 30000);

  it("an operator's mute through interface A stops that page's media at the others; the page shows it", async () => {
    const muted = ids[2]!;
    await stack.a('PATCH', userPath(muted.userId), { audioMuted: true, videoMuted: true, audioUnmuteDisabled: true });
    await pages[2]!.waitForFunction(
      () => document.querySelector('.tile.local .state')?.textContent?.includes('muted by the operator'),
      undefined,
      WAIT,
    );
    expect(await pages[2]!.locator('#operator-log').textContent()).toContain(
      'The operator muted your microphone and disabled unmuting.',
    );
    expect(await pages[2]!.locator('.tile.local .state').textContent()).toContain(
      'microphone muted by the operator (unmuting disabled)',
    );
    // The page's own unmute is refused by the SDK while the operator disables it.
    await pages[2]!.click('#toggle-audio');
    await pages[2]!.waitForFunction(
      () =>
        document
          .getElementById('operator-log')
          ?.textContent?.includes('The operator does not let you unmute your microphone.'),
      undefined,
      WAIT,
    );
    for (const page of pages.slice(0, 2)) {
      // The page itself sees the stream stop (its bytes stopped growing) ...
      await page.waitForFunction(
        (clientId) =>
          document.querySelector<HTMLElement>(`.tile[data-client-id="${clientId}"]`)?.dataset.audioMuted === 'true',
        muted.clientId,
        WAIT,
      );
      // ... and the counters of that tile hold still while the other tile's grow.
      const first = await page.evaluate(readTiles);
      await page.waitForTimeout(1500);
      const second = await page.evaluate(readTiles);
      const of = (tiles: RemoteTileState[], clientId: string) => tiles.find((tile) => tile.clientId === clientId)!;
      expect(of(second, muted.clientId).videoBytes).toBe(of(first, muted.clientId).videoBytes);
      expect(of(second, muted.clientId).audioBytes).toBe(of(first, muted.clientId).audioBytes);
      const other = first.find((tile) => tile.clientId !== muted.clientId)!.clientId;
      expect(of(second, other).videoBytes).toBeGreaterThan(of(first, other).videoBytes);
    }
  }, 30000);

  it('a kick through interface A removes that page, which says why; its tile leaves the others', async () => {
    const kicked = ids[2]!;
    await stack.a('DELETE', userPath(kicked.userId));
    await pages[2]!.waitForSelector('#removed', { timeout: WAIT.timeout });
    expect(await pages[2]!.locator('#removed').textContent()).toBe(
      `Removed by the operator: kicked out of the room "${ROOM}".`,
    );
    for (const page of pages.slice(0, 2)) {
      await page.waitForFunction(
        (clientId) =>
          document.querySelectorAll('.tile[data-remote-connection-id]').length === 1 &&
          !document.querySelector(`.tile[data-client-id="${clientId}"]`),
        kicked.clientId,
        WAIT,
      );
    }
  }, 30000);
});
