/// <reference lib="dom" />
/**
 * The SDK's browser bundle (`libs/client/dist/browser`, built by `npm run build`) in the system's
 * headless Chromium (fake camera and microphone), against the whole control plane and a real
 * Janus: two pages publish with `client.publish`, receive each other with `client.subscribe`, and
 * decode the other's video. Also prints the time from `subscribe()` to the first decoded frame.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import type { Client } from '@switchboard/client';
import { waitFor } from '@switchboard/testing';
import { launchChromium } from '../../tools/testing/chromium.js';
import { MediaSessionStack } from '../../tools/testing/media-session-stack.js';

const CHANNEL = 'sdk-browser';
const USERS = ['page-one', 'page-two'] as const;
const FAKE_MEDIA = [
  '--use-fake-device-for-media-stream',
  '--use-fake-ui-for-media-stream',
  '--disable-features=WebRtcHideLocalIpsWithMdns',
];
const BUNDLE = new URL('../../libs/client/dist/browser/switchboard-client.min.js', import.meta.url);
const PAGE = `<!doctype html><title>sdk</title>
<script type="module">import { Client } from '/sdk.js'; window.SwitchboardClient = Client;</script>`;

interface SdkWindow {
  SwitchboardClient?: typeof Client;
  client?: Client;
}

/** In the page: registers, joins and publishes the fake camera and microphone with the SDK. */
async function publishWithSdk(options: { syncUrl: string; token: string; channelId: string; upstreamId: string }) {
  const page = window as unknown as SdkWindow;
  const client = new page.SwitchboardClient!({ url: options.syncUrl, statsIntervalMs: 1000 });
  page.client = client;
  await client.register(options.token);
  await client.join(options.channelId);
  const media = await navigator.mediaDevices.getUserMedia({ audio: true, video: { width: 640, height: 480 } });
  const [audio] = media.getAudioTracks();
  const [video] = media.getVideoTracks();
  await client.publish(options.channelId, { audio, video, connectionId: options.upstreamId });
}

/** In the page: subscribes to a remote upstream; resolves with the milliseconds until its first decoded frame. */
async function subscribeWithSdk(options: { channelId: string; remoteConnectionId: string }): Promise<number> {
  const client = (window as unknown as SdkWindow).client!;
  const started = performance.now();
  const downstream = await client.subscribe(options.channelId, options.remoteConnectionId);
  const pc = downstream.peerConnection as unknown as RTCPeerConnection;
  for (;;) {
    let frames = 0;
    (await pc.getStats()).forEach((stat: { type: string; kind?: string; framesDecoded?: number }) => {
      if (stat.type === 'inbound-rtp' && stat.kind === 'video') frames += stat.framesDecoded ?? 0;
    });
    if (frames > 0) return Math.round(performance.now() - started);
    if (performance.now() - started > 15000) throw new Error('no decoded frame within 15 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * In the page: registers, then measures from `join()` to the first decoded frame of a remote upstream
 * the SDK subscribed to by itself (`autoSubscribe`, from the join's upstreams); unregisters after.
 */
async function joinUntilFirstFrame(options: { syncUrl: string; token: string; channelId: string }): Promise<number> {
  const page = window as unknown as SdkWindow;
  const client = new page.SwitchboardClient!({ url: options.syncUrl, autoSubscribe: true, statsIntervalMs: 0 });
  await client.register(options.token);
  const started = performance.now();
  const subscribed = client.once('connection');
  await client.join(options.channelId);
  const [downstream] = await subscribed;
  const pc = downstream.peerConnection as unknown as RTCPeerConnection;
  for (;;) {
    let frames = 0;
    (await pc.getStats()).forEach((stat: { type: string; kind?: string; framesDecoded?: number }) => {
      if (stat.type === 'inbound-rtp' && stat.kind === 'video') frames += stat.framesDecoded ?? 0;
    });
    if (frames > 0) break;
    if (performance.now() - started > 15000) throw new Error('no decoded frame within 15 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const elapsed = Math.round(performance.now() - started);
  await client.unregister();
  return elapsed;
}

const percentile = (sorted: number[], fraction: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;

describe('the SDK browser bundle in Chromium', () => {
  const stack = new MediaSessionStack();
  let browser: Browser;
  // Pages on 127.0.0.1: a secure context, so getUserMedia is allowed.
  const pageServer = http.createServer((request, response) => {
    if (request.url === '/sdk.js')
      response.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(BUNDLE));
    else response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  });

  beforeAll(async () => {
    await Promise.all([
      stack.start(),
      new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve)),
      launchChromium(FAKE_MEDIA).then((launched) => (browser = launched)),
    ]);
  }, 90000);

  afterAll(async () => {
    await browser?.close();
    pageServer.close();
    await stack.stop();
  });

  it('publishes and subscribes with the SDK: each page decodes the video of the other', async () => {
    const pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/`;
    const syncUrl = `${stack.gateway.url!.replace('http', 'ws')}/sync`;
    const pages = new Map<string, Page>();
    for (const user of USERS) {
      const page = await (await browser.newContext()).newPage();
      await page.goto(pageUrl);
      await page.waitForFunction(() => (window as unknown as SdkWindow).SwitchboardClient !== undefined);
      const token = await stack.token(user, CHANNEL);
      await page.evaluate(publishWithSdk, { syncUrl, token, channelId: CHANNEL, upstreamId: `${user}-up` });
      pages.set(user, page);
    }
    const firstFrameMs: number[] = [];
    for (const [user, other] of [USERS, [...USERS].reverse()] as const) {
      const page = pages.get(user)!;
      firstFrameMs.push(
        await page.evaluate(subscribeWithSdk, { channelId: CHANNEL, remoteConnectionId: `${other}-up` }),
      );
    }
    process.stdout.write(`SDK in Chromium: subscribe() to first decoded frame ${firstFrameMs.join(', ')} ms\n`);
    expect(firstFrameMs.every((ms) => ms > 0)).toBe(true);

    // The upstream's stats reached the gateway: the connection's video frame size on interface A.
    await waitFor(
      async () => {
        const info = await stack.a<{ videoStream: { width: number | null } | null }>(
          'GET',
          `/applications/${stack.applicationId}/channels/${CHANNEL}/users/page-one/devices/page-one-device/clients/page-one-client/connections/page-one-up`,
        );
        return (info.videoStream?.width ?? 0) > 0;
      },
      { timeoutMs: 10000, description: "page-one's video width on interface A" },
    );
  }, 90000);
  it('joins 20 times with autoSubscribe: join() to the first decoded remote frame, p50 and p99', async () => {
    const pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/`;
    const syncUrl = `${stack.gateway.url!.replace('http', 'ws')}/sync`;
    const page = await (await browser.newContext()).newPage();
    const times: number[] = [];
    for (let join = 0; join < 20; join++) {
      await page.goto(pageUrl);
      await page.waitForFunction(() => (window as unknown as SdkWindow).SwitchboardClient !== undefined);
      const token = await stack.token(`viewer-${join}`, CHANNEL);
      times.push(await page.evaluate(joinUntilFirstFrame, { syncUrl, token, channelId: CHANNEL }));
    }
    const sorted = [...times].sort((a, b) => a - b);
    process.stdout.write(
      `SDK in Chromium: join() to first decoded frame over ${times.length} joins: ` +
        `p50 ${percentile(sorted, 0.5)} ms, p99 ${percentile(sorted, 0.99)} ms (${times.join(', ')})\n`,
    );
    expect(times).toHaveLength(20);
  }, 120000);
});
