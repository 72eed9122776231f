/**
 * Two pages of the system's headless Chromium (Debian `chromium`, fake camera and microphone) in
 * one channel, through the whole control plane and a real Janus: each decodes the other's video.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { waitFor } from '@switchboard/testing';
import { launchChromium } from '../../tools/testing/chromium.js';
import { MediaSessionStack } from '../../tools/testing/media-session-stack.js';
import { framesDecodedInPage, publishInPage, receiveInPage } from './browser-call.js';

const CHANNEL = 'browser-call';
const USERS = ['page-one', 'page-two'] as const;
const FAKE_MEDIA = [
  '--use-fake-device-for-media-stream',
  '--use-fake-ui-for-media-stream',
  '--disable-features=WebRtcHideLocalIpsWithMdns',
];

describe('two Chromium pages in one channel', () => {
  const stack = new MediaSessionStack();
  let browser: Browser;
  // An empty page on 127.0.0.1: a secure context, so getUserMedia is allowed.
  const pageServer = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>call</title>');
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

  it('each page decodes the video of the other (getStats framesDecoded > 0)', async () => {
    const pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/`;
    const syncUrl = `${stack.gateway.url!.replace('http', 'ws')}/sync`;
    const pages = new Map<string, Page>();
    for (const user of USERS) {
      const page = await (await browser.newContext()).newPage();
      await page.goto(pageUrl);
      const token = await stack.token(user, CHANNEL);
      await page.evaluate(publishInPage, { syncUrl, token, channelId: CHANNEL, upstreamId: `${user}-up` });
      pages.set(user, page);
    }
    for (const [user, other] of [USERS, [...USERS].reverse()] as const) {
      await pages.get(user)!.evaluate(receiveInPage, {
        channelId: CHANNEL,
        connectionId: `${user}-from-${other}`,
        remoteConnectionId: `${other}-up`,
      });
    }
    for (const user of USERS) {
      await waitFor(async () => (await pages.get(user)!.evaluate(framesDecodedInPage)) > 0, {
        timeoutMs: 15000,
        description: `decoded frames on ${user}'s page`,
      });
    }
  }, 60000);
});
