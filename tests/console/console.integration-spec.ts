/**
 * The operator console in real headless Chromium (the system's Debian package) against a real
 * stack with live clients: what the pages show is checked against the APIs in the same test.
 */
import axe from 'axe-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { testNamespace, waitFor } from '@switchboard/testing';
import { createHash } from 'node:crypto';
import { launchChromium } from '../../tools/testing/chromium.js';
import { TestOAuthIssuer } from '../../tools/testing/oauth-issuer.js';
import { ConsoleStack, type LiveClient } from './console-stack.js';

const XSS_CHANNEL = '<img src=x onerror=alert(1)>';

interface ChannelSnapshot {
  id: string;
  clientCount: number;
  connectionCount: number;
}
interface ConnectionInfo {
  id: string;
  localAudioMuted: boolean;
  localVideoMuted: boolean;
}

describe('operator console', () => {
  const ns = testNamespace('console');
  const applicationId = `app-${ns}`.replace(/_/g, '-');
  const issuer = new TestOAuthIssuer({ clientId: 'switchboard-console', audience: 'switchboard', claims: {} });
  const stack = new ConsoleStack(ns, applicationId, { oauth: issuer });
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let alice: LiveClient;
  let bob: LiveClient;
  /** Script dialogs (alert) and CSP refusals seen in the page: an injected script would show here. */
  const dialogs: string[] = [];
  const cspViolations: string[] = [];

  beforeAll(async () => {
    await issuer.start();
    [browser] = await Promise.all([launchChromium(), stack.start()]);
    alice = await stack.connectClient('alice', 'alice-laptop', 'alice-1', 'lobby');
    bob = await stack.connectClient('bob', 'bob-phone', 'bob-1', 'lobby');
    await stack.connectClient('mallory', 'mallory-pc', 'mallory-1', XSS_CHANNEL);
    context = await browser.newContext();
    page = await context.newPage();
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) cspViolations.push(message.text());
    });
  }, 60000);

  afterAll(async () => {
    await browser?.close();
    await stack.stop();
    await issuer.close();
  });

  async function signIn(target: Page, key: string) {
    await target.goto(stack.consoleUrl);
    await target.getByLabel('API key').fill(key);
    await target.getByRole('button', { name: 'Sign in', exact: true }).click();
    await target.getByRole('button', { name: 'Sign out' }).waitFor();
  }

  async function expectNoSeriousAxeViolations(target: Page) {
    // Injected once per document (the console is one page: its navigation keeps the document).
    if (!(await target.evaluate("typeof window.axe === 'object'"))) await target.evaluate(axe.source);
    const results = (await target.evaluate("axe.run(document, { resultTypes: ['violations'] })")) as axe.AxeResults;
    const serious = results.violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
    expect(serious).toEqual([]);
  }

  it('serves the page and forwards the APIs from one origin, with a strict CSP and no CORS opening', async () => {
    const index = await fetch(stack.consoleUrl);
    const csp = index.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    const forwarded = await fetch(`${stack.consoleUrl}/api/a/applications`, {
      headers: { 'x-api-key': stack.operatorKey, origin: 'https://elsewhere.example' },
    });
    expect(forwarded.status).toBe(200);
    expect(await forwarded.json()).toEqual(await stack.a('GET', '/applications'));
    expect(forwarded.headers.get('access-control-allow-origin')).toBeNull();
    expect((await fetch(`${stack.consoleUrl}/api/b/ApiKeys`)).status).toBe(401);
  });

  it('signs in with the operator key, kept in session storage and never in the URL', async () => {
    await signIn(page, stack.operatorKey);
    expect(page.url()).not.toContain(stack.operatorKey);
    expect(await page.evaluate('Object.values(sessionStorage)')).toEqual([stack.operatorKey]);
    await expect(page.getByRole('button', { name: 'Parked events' }).count()).resolves.toBe(1);
  });

  it('the Live page shows the applications, channels and clients the API returns', async () => {
    const application = page
      .getByRole('table', { name: /^Applications/ })
      .locator('tbody tr', { hasText: applicationId });
    await application.waitFor();
    const snapshot = await stack.a<{ clientCount: number }>('GET', `/applications/${applicationId}`);
    await expect(application.locator('td').nth(4).textContent()).resolves.toBe(String(snapshot.clientCount));
    await application.getByRole('button', { name: applicationId }).click();

    const channels = await stack.a<ChannelSnapshot[]>('GET', `/applications/${applicationId}/channels`);
    const channelTable = page.getByRole('table', { name: /^Channels/ });
    await waitFor(async () => (await channelTable.locator('tbody tr').count()) === channels.length, {
      timeoutMs: 5000,
    });
    const shown = await channelTable
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent)));
    const byId = (one: Array<string | null>, other: Array<string | null>) =>
      (one[0] ?? '').localeCompare(other[0] ?? '');
    expect(shown.map((cells) => [cells[0], cells[3], cells[4]]).sort(byId)).toEqual(
      channels.map((c) => [c.id, String(c.clientCount), String(c.connectionCount)]).sort(byId),
    );

    await channelTable.getByRole('button', { name: 'lobby', exact: true }).click();
    const clients = await stack.a<Array<{ id: string }>>(
      'GET',
      `/applications/${applicationId}/channels/lobby/clients`,
    );
    const clientTable = page.getByRole('table', { name: /^Clients/ });
    await waitFor(async () => (await clientTable.locator('tbody tr').count()) === clients.length, { timeoutMs: 5000 });
    const clientIds = await clientTable.locator('tbody tr td:first-child').allTextContents();
    expect(clientIds.toSorted()).toEqual(clients.map((c) => c.id).toSorted());
  });

  it('muting a client through the console mutes its connection (read through the API) and reaches the live client', async () => {
    const connectionPath = `/applications/${applicationId}/channels/lobby/users/bob/devices/bob-phone/clients/bob-1/connections/cn-bob-1`;
    expect((await stack.a<ConnectionInfo>('GET', connectionPath)).localAudioMuted).toBe(false);
    const actions = page.getByRole('group', { name: 'Actions on client bob-1' });
    await actions.getByRole('button', { name: 'Mute audio', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Mute the audio of client bob-1?' });
    // The page reads the channel again every 2 s: the open confirmation must survive that.
    await page.waitForTimeout(2500);
    expect(await dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await actions.getByRole('status').waitFor();
    await waitFor(async () => (await stack.a<ConnectionInfo>('GET', connectionPath)).localAudioMuted, {
      timeoutMs: 5000,
    });
    await waitFor(() => bob.pushes.some((push) => push.type === 'settings'), { timeoutMs: 5000 });
    const connectionRow = page
      .getByRole('table', { name: /^Connections/ })
      .locator('tbody tr', { hasText: 'cn-bob-1' });
    await waitFor(async () => (await connectionRow.locator('td').nth(5).textContent()) === 'yes', { timeoutMs: 5000 });
  });

  it('shows a connection in detail as the API reports it', async () => {
    const connection = await stack.a<Record<string, unknown>>(
      'GET',
      `/applications/${applicationId}/channels/lobby/users/alice/devices/alice-laptop/clients/alice-1/connections/cn-alice-1`,
    );
    await page
      .getByRole('table', { name: /^Connections/ })
      .getByRole('button', { name: 'cn-alice-1' })
      .click();
    const detail = page.getByRole('region', { name: 'Connection cn-alice-1' });
    for (const field of ['id', 'clientId', 'state', 'type', 'hasAudio', 'hasVideo'] as const) {
      await expect(
        detail
          .locator('dt', { hasText: new RegExp(`^${field}$`) })
          .locator('+ dd')
          .textContent(),
      ).resolves.toBe(String(connection[field]));
    }
    await detail.getByRole('button', { name: 'Close connection detail' }).click();
    await detail.waitFor({ state: 'detached' });
  });

  it('a server message sent to a channel from the console reaches its live clients', async () => {
    const actions = page.getByRole('group', { name: 'Actions on channel lobby' });
    await actions.getByRole('button', { name: 'Send message' }).click();
    const dialog = page.getByRole('dialog', { name: 'Send a server message to channel lobby:' });
    await dialog.getByLabel('Message').fill('maintenance at noon <b>sharp</b>');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await actions.getByRole('status').waitFor();
    for (const client of [alice, bob]) {
      await waitFor(() => JSON.stringify(client.pushes).includes('maintenance at noon <b>sharp</b>'), {
        timeoutMs: 5000,
        description: 'the message at a live client',
      });
    }
  });

  it('is operable from the keyboard: sign-in, opening a channel, cancelling and confirming an action', async () => {
    const connectionPath = `/applications/${applicationId}/channels/lobby/users/alice/devices/alice-laptop/clients/alice-1/connections/cn-alice-1`;
    const keyboardContext = await browser.newContext();
    const keys = await keyboardContext.newPage();
    try {
      await keys.goto(stack.consoleUrl);
      // The sign-in form renders after the bundle runs: Tab before it would focus nothing.
      await keys.locator('input[type="password"]').waitFor();
      await keys.keyboard.press('Tab');
      expect(await keys.evaluate('document.activeElement.type')).toBe('password');
      await keys.keyboard.type(stack.operatorKey);
      await keys.keyboard.press('Enter');
      await keys.getByRole('button', { name: 'Sign out' }).waitFor();
      await keys.getByRole('button', { name: applicationId }).focus();
      await keys.keyboard.press('Enter');
      await keys.getByRole('button', { name: 'lobby', exact: true }).focus();
      await keys.keyboard.press('Enter');
      const muteVideo = keys
        .getByRole('group', { name: 'Actions on client alice-1' })
        .getByRole('button', { name: 'Mute video', exact: true });
      await muteVideo.focus();
      await keys.keyboard.press('Enter');
      const dialog = keys.getByRole('dialog', { name: 'Mute the video of client alice-1?' });
      await dialog.waitFor();
      expect(await keys.evaluate('document.activeElement.closest("dialog")?.open === true')).toBe(true);
      await keys.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      expect((await stack.a<ConnectionInfo>('GET', connectionPath)).localVideoMuted).toBe(false);
      await muteVideo.focus();
      await keys.keyboard.press('Enter');
      await dialog.waitFor();
      await keys.keyboard.press('Enter');
      await waitFor(async () => (await stack.a<ConnectionInfo>('GET', connectionPath)).localVideoMuted, {
        timeoutMs: 5000,
        description: 'alice muted from the keyboard',
      });
    } finally {
      await keyboardContext.close();
    }
  });

  it('a channel named like markup shows as text and runs nothing', async () => {
    const channelTable = page.getByRole('table', { name: /^Channels/ });
    const xssButton = channelTable.getByRole('button', { name: XSS_CHANNEL, exact: true });
    await expect(xssButton.textContent()).resolves.toBe(XSS_CHANNEL);
    await xssButton.click();
    await page.getByRole('heading', { name: `Channel ${XSS_CHANNEL}` }).waitFor();
    await page
      .getByRole('table', { name: /^Clients/ })
      .locator('tbody tr', { hasText: 'mallory-1' })
      .waitFor();
    expect(await page.locator('img').count()).toBe(0);
    expect(dialogs).toEqual([]);
    expect(cspViolations).toEqual([]);
  });

  it('a failed webhook delivery shows in the log, and its replay from the console reaches the receiver', async () => {
    interface Deliveries {
      value: Array<{
        id: string;
        deliveryId: string;
        success: boolean;
        final: boolean;
        replayOf: string | null;
        eventType: string;
      }>;
    }
    const failedQuery = `/WebhookDeliveries?$filter=${encodeURIComponent('success eq false and final eq true')}`;
    const failed = await waitFor(
      async () => (await stack.b<Deliveries>('GET', failedQuery, stack.operatorKey)).value.at(-1),
      { timeoutMs: 10000, description: 'a failed webhook delivery' },
    );
    stack.receiver.failing = false;
    await page.getByRole('button', { name: 'Webhook deliveries' }).click();
    await page.getByLabel('Outcome').selectOption('failed');
    await page.getByLabel('Last attempts only').check();
    const table = page.getByRole('table', { name: /^Delivery attempts/ });
    const all = await stack.b<Deliveries>('GET', failedQuery, stack.operatorKey);
    await waitFor(async () => (await table.locator('tbody tr').count()) === all.value.length, { timeoutMs: 5000 });
    const row = table.locator(`tbody tr[data-row-id="${failed.id}"]`);
    await expect(row.locator('td').nth(3).textContent()).resolves.toBe(failed.eventType);
    const answered = stack.receiver.received.length;
    await row.getByRole('button', { name: 'Replay' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
    await row.getByRole('status').waitFor();
    const replayQuery = `/WebhookDeliveries?$filter=${encodeURIComponent(`replayOf eq ${failed.deliveryId}`)}`;
    const replay = await waitFor(
      async () => (await stack.b<Deliveries>('GET', replayQuery, stack.operatorKey)).value.find((d) => d.final),
      { timeoutMs: 10000, description: 'the replay in the delivery log' },
    );
    expect(replay).toEqual(expect.objectContaining({ success: true, replayOf: failed.deliveryId }));
    expect(stack.receiver.received.slice(answered)).toContainEqual({ webhookId: replay.deliveryId, status: 200 });
  });

  it('the media servers page shows what the API lists, and disables one with confirmation', async () => {
    interface MediaServer {
      id: string;
      active: boolean;
      computer: { hostName: string; region: string | null };
    }
    const listed = await waitFor(
      async () => (await stack.a<MediaServer[]>('GET', '/mediaservers')).find((m) => m.id === stack.mediaServer.id),
      { timeoutMs: 5000, description: 'the simulated media server in the API' },
    );
    await page.getByRole('button', { name: 'Media servers' }).click();
    const row = page.getByRole('table', { name: /^Media servers/ }).locator(`tbody tr[data-row-id="${listed.id}"]`);
    await row.waitFor();
    const cells = await row.locator('td').allTextContents();
    expect(cells.slice(0, 4)).toEqual([listed.id, listed.computer.hostName, '<i>eu</i>', 'enabled']);
    await row.getByRole('button', { name: 'Disable' }).click();
    await page
      .getByRole('dialog', { name: /^Disable media server/ })
      .getByRole('button', { name: 'Confirm' })
      .click();
    await waitFor(async () => (await stack.a<MediaServer>('GET', `/mediaservers/${listed.id}`)).active === false, {
      timeoutMs: 5000,
      description: 'the media server disabled',
    });
    await waitFor(async () => (await row.locator('td').nth(3).textContent()) === 'disabled', { timeoutMs: 5000 });
  });

  it('axe-core finds no serious or critical violation on any page', async () => {
    await expectNoSeriousAxeViolations(page);
    await page.getByRole('button', { name: 'Webhook deliveries' }).click();
    await page.getByRole('table', { name: /^Delivery attempts/ }).waitFor();
    await expectNoSeriousAxeViolations(page);
    await page.getByRole('button', { name: 'Parked events' }).click();
    await page.getByRole('table', { name: /^Parked events/ }).waitFor();
    await expectNoSeriousAxeViolations(page);
    await page.getByRole('button', { name: 'Change log' }).click();
    await page
      .getByRole('table', { name: /^Changes/ })
      .locator('tbody tr')
      .first()
      .waitFor();
    await expectNoSeriousAxeViolations(page);
    await page.getByRole('button', { name: 'Media servers' }).click();
    await page
      .getByRole('table', { name: /^Media servers/ })
      .locator('tbody tr')
      .first()
      .waitFor();
    await expectNoSeriousAxeViolations(page);
    expect(cspViolations).toEqual([]);
    expect(dialogs).toEqual([]);
  });

  it('an organization key is not offered the operator-only pages', async () => {
    const organization = await stack.b<{ apiKey: { key: string } }>('POST', '/Organizations', stack.operatorKey, {
      name: 'Console customer',
    });
    const customerContext = await browser.newContext();
    const customerPage = await customerContext.newPage();
    try {
      await signIn(customerPage, organization.apiKey.key);
      await customerPage.getByRole('button', { name: 'Webhook deliveries' }).waitFor();
      expect(await customerPage.getByRole('button', { name: 'Parked events' }).count()).toBe(0);
      expect(await customerPage.getByRole('button', { name: 'Media servers' }).count()).toBe(0);
      expect(await customerPage.getByRole('button', { name: 'Organizations' }).count()).toBe(0);
      await expect(customerPage.getByText('Organization key').count()).resolves.toBe(1);
    } finally {
      await customerContext.close();
    }
  });

  it('signs in with OAuth2 (authorization code, PKCE S256, state) and calls the APIs as that bearer', async () => {
    const customerContext = await browser.newContext();
    const oauthPage = await customerContext.newPage();
    const credentials: string[] = [];
    oauthPage.on('request', (request) => {
      if (request.url().startsWith(`${stack.consoleUrl}/api/a/`))
        credentials.push(request.headers().authorization ?? '');
    });
    const navPages = async () => oauthPage.getByRole('navigation').getByRole('button').allTextContents();
    try {
      issuer.options.claims = { sub: 'dana', org_id: stack.operatorOrganizationId };
      await oauthPage.goto(stack.consoleUrl);
      await oauthPage.getByRole('button', { name: `Sign in with ${issuer.url}` }).click();
      await oauthPage.getByRole('button', { name: 'Sign out' }).waitFor();

      const authorization = issuer.authorizationRequests.at(-1)!;
      expect(Object.fromEntries(authorization)).toEqual({
        response_type: 'code',
        client_id: 'switchboard-console',
        redirect_uri: `${stack.consoleUrl}/`,
        code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        code_challenge_method: 'S256',
        state: expect.stringMatching(/^[A-Za-z0-9_-]{20,}$/),
      });
      const verifier = issuer.tokenRequests.at(-1)!.get('code_verifier')!;
      expect(createHash('sha256').update(verifier).digest('base64url')).toBe(authorization.get('code_challenge'));
      const token = issuer.issuedTokens.at(-1)!;
      // The code and the token never stay in the address; the token is kept in session storage only.
      expect(oauthPage.url()).toBe(`${stack.consoleUrl}/`);
      expect(await oauthPage.evaluate('Object.values(sessionStorage)')).toEqual([token]);
      await oauthPage
        .getByRole('table', { name: /^Applications/ })
        .locator('tbody tr', { hasText: applicationId })
        .waitFor();
      expect(credentials.length).toBeGreaterThan(0);
      expect(new Set(credentials)).toEqual(new Set([`Bearer ${token}`]));
      // An organization token: no operator page is offered.
      expect(await navPages()).not.toEqual(expect.arrayContaining(['Media servers']));
      expect(await navPages()).not.toEqual(expect.arrayContaining(['Parked events']));
      await expect(oauthPage.getByText('Organization token (OAuth2)').count()).resolves.toBe(1);

      // With the operator scope: interface A's operator pages (media servers), not interface B's.
      issuer.options.claims = { sub: 'dana', org_id: stack.operatorOrganizationId, scope: 'switchboard:operator' };
      await oauthPage.getByRole('button', { name: 'Sign out' }).click();
      await oauthPage.getByRole('button', { name: `Sign in with ${issuer.url}` }).click();
      await oauthPage.getByText('Operator token (OAuth2)').waitFor();
      expect(await navPages()).toEqual(expect.arrayContaining(['Media servers']));
      expect(await navPages()).not.toEqual(expect.arrayContaining(['Parked events']));
      expect(await navPages()).not.toEqual(expect.arrayContaining(['Organizations']));
      expect(issuer.authorizationRequests.at(-1)!.get('state')).not.toBe(authorization.get('state'));
    } finally {
      await customerContext.close();
    }
  });
});
