/**
 * The console's management pages against a real stack: recordings (played and downloaded through
 * the console's origin), webhook configuration, usage per day and pixel bucket, organizations and
 * API keys. What each page shows is checked against the API in the same test.
 */
import { connect } from '@nats-io/transport-node';
import { testNamespace, testServers, waitFor } from '@switchboard/testing';
import { connectionEvent, participant, UsageHarness } from '../usage/usage-harness.js';
import { ConsoleBrowser } from './console-browser.js';
import { ConsoleStack } from './console-stack.js';

const XSS_NAME = '<img src=x onerror=alert(2)>';
const DAY_MS = 86_400_000;

interface ChannelRecording {
  id: string;
  channelId: string;
  tag: string | null;
  deleted: boolean;
  ready: boolean;
  fileSize: number;
  expiryTimestamp: string | null;
}
interface Webhook {
  id: string;
  name: string;
  url: string;
  disabled: boolean;
  reliable: boolean;
}

describe('operator console: recordings, webhooks, usage, organizations', () => {
  const ns = testNamespace('console_manage');
  const applicationId = `app-${ns}`.replace(/_/g, '-');
  const stack = new ConsoleStack(ns, applicationId, { recordings: true, usage: true });
  const browser = new ConsoleBrowser();
  let recording: { id: string; fileSize: number };
  const page = () => browser.page;

  beforeAll(async () => {
    await Promise.all([browser.launch(), stack.start()]);
    await stack.connectClient('rita', 'rita-pc', 'rita-1', 'studio');
    recording = await stack.record('studio', 'cn-rita-1');
    await browser.signIn(stack.consoleUrl, stack.operatorKey);
  }, 90000);

  afterAll(async () => {
    await browser.close();
    await stack.stop();
  });

  const recordingPath = (id: string) => `/applications/${applicationId}/channels/studio/recordings/${id}`;

  it('lists the channel recordings the API lists, and plays one in the page through the console origin', async () => {
    const listed = await stack.a<ChannelRecording[]>('GET', `/applications/${applicationId}/recordings`);
    await browser.open('Recordings');
    await page().getByLabel('Application').selectOption(applicationId);
    const table = page().getByRole('table', { name: /^Channel recordings/ });
    await waitFor(async () => (await table.locator('tbody tr').count()) === listed.length, { timeoutMs: 5000 });
    const row = table.locator(`tbody tr[data-row-id="${recording.id}"]`);
    const cells = await row.locator('td').allTextContents();
    expect([cells[0], cells[1], cells[5], cells[6]]).toEqual(['studio', 'take <1>', 'ready', '1']);
    await row.getByRole('button', { name: 'Play' }).focus();
    await page().keyboard.press('Enter');
    const video = page().getByLabel(`Channel recording ${recording.id}`);
    await expect(video.getAttribute('src')).resolves.toMatch(/^\/recordings\/files\//);
    // The browser loads the file through the console (CSP media-src 'self') and reads its duration.
    const duration = await waitFor(
      async () =>
        video.evaluate((element) => {
          const media = element as unknown as { readyState: number; duration: number };
          return media.readyState >= 1 ? media.duration : null;
        }),
      { timeoutMs: 10000, description: 'the recording playable in the page' },
    );
    expect(duration).toBeGreaterThan(0);
    const connectionMedia = page().getByLabel('Video of connection cn-rita-1 of rita');
    await expect(connectionMedia.count()).resolves.toBe(1);
    const href = await row.getByRole('link', { name: 'Download' }).getAttribute('href');
    const downloaded = await page().evaluate(
      async (link) => (await (await fetch(link!)).arrayBuffer()).byteLength,
      href,
    );
    expect(downloaded).toBe(recording.fileSize);
    expect(href).not.toContain(stack.operatorKey);
    expect(browser.cspViolations).toEqual([]);
  });

  it('filters the recordings by channel and start time, as the API filters them', async () => {
    const table = page().getByRole('table', { name: /^Channel recordings/ });
    await page().getByRole('textbox', { name: 'Channel' }).fill('studio');
    const inChannel = await stack.a<ChannelRecording[]>(
      'GET',
      `/applications/${applicationId}/channels/studio/recordings`,
    );
    await waitFor(async () => (await table.locator('tbody tr').count()) === inChannel.length, { timeoutMs: 5000 });
    const tomorrow = new Date(Date.now() + 86_400_000);
    await page().getByLabel('Started from').fill(tomorrow.toISOString().slice(0, 16));
    const later = await stack.a<ChannelRecording[]>(
      'GET',
      `/applications/${applicationId}/channels/studio/recordings?timestampMin=${Math.floor(tomorrow.getTime() / 1000)}`,
    );
    expect(later).toEqual([]);
    await waitFor(async () => (await table.locator('tbody tr').count()) === 0, { timeoutMs: 5000 });
    await page().getByLabel('Started from').fill('');
    await table.locator(`tbody tr[data-row-id="${recording.id}"]`).waitFor();
  });

  it('changes the expiry of a recording and deletes it, with confirmation', async () => {
    const row = page().locator(`tbody tr[data-row-id="${recording.id}"]`);
    await row.getByRole('button', { name: 'Change expiry' }).click();
    const dialog = page().getByRole('dialog', { name: `New expiry of recording ${recording.id}:` });
    await dialog.getByLabel('Expires on').fill('2031-01-02T03:04');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    const expected = await page().evaluate(() => new Date('2031-01-02T03:04').getTime());
    await waitFor(
      async () => {
        const expiry = (await stack.a<ChannelRecording>('GET', recordingPath(recording.id))).expiryTimestamp;
        return expiry !== null && Date.parse(expiry) === expected;
      },
      { timeoutMs: 5000, description: 'the new expiry through the API' },
    );
    await waitFor(async () => (await row.locator('td').nth(4).textContent()) !== 'never', { timeoutMs: 5000 });
    await row.getByRole('button', { name: 'Delete' }).click();
    await page()
      .getByRole('dialog', { name: `Delete recording ${recording.id} and its files?` })
      .getByRole('button', { name: 'Confirm' })
      .click();
    await waitFor(async () => (await stack.a<ChannelRecording>('GET', recordingPath(recording.id))).deleted, {
      timeoutMs: 10000,
      description: 'the recording deleted through the API',
    });
    await waitFor(async () => (await row.locator('td').nth(5).textContent()) === 'deleted', { timeoutMs: 5000 });
    expect(await browser.seriousAxeViolations()).toEqual([]);
  });

  it('creates, edits and disables application and channel webhooks', async () => {
    const channelConfig = await stack.b<{ id: string }>('POST', '/ChannelConfigs', stack.operatorKey, {
      applicationConfigId: stack.configId,
      channelIdPattern: 'studio',
    });
    const hooks = async (set: string, parent: string) =>
      (await stack.b<{ value: Webhook[] }>('GET', `/${set}?${parent}`, stack.operatorKey)).value;
    await browser.open('Webhooks');
    await page().getByLabel('Application config').selectOption(stack.configId);
    const appTable = page().getByRole('table', { name: /^Application webhooks/ });
    const existing = await hooks('ApplicationWebhooks', `applicationConfigId=${stack.configId}`);
    await waitFor(async () => (await appTable.locator('tbody tr').count()) === existing.length, { timeoutMs: 5000 });
    await expect(appTable.locator('tbody tr td').first().textContent()).resolves.toBe(existing[0]!.name);

    const form = page().getByRole('form', { name: 'New webhook of application webhooks' });
    await form.getByLabel('Name').fill(XSS_NAME);
    await form.getByLabel('URL').fill('https://hooks.example/app');
    await form.getByLabel('Reliable').check();
    await form.getByRole('button', { name: 'Save' }).click();
    const created = await waitFor(
      async () =>
        (await hooks('ApplicationWebhooks', `applicationConfigId=${stack.configId}`)).find((h) => h.name === XSS_NAME),
      { timeoutMs: 5000, description: 'the new webhook through the API' },
    );
    expect(created).toEqual(
      expect.objectContaining({ url: 'https://hooks.example/app', reliable: true, disabled: false }),
    );
    const actions = page().getByRole('group', { name: `Actions on webhook ${XSS_NAME}` });
    await actions.getByRole('button', { name: 'Edit' }).click();
    const edit = page().getByRole('form', { name: `Edit webhook ${XSS_NAME}` });
    await edit.getByLabel('URL').fill('https://hooks.example/edited');
    await edit.getByRole('button', { name: 'Save' }).click();
    await waitFor(
      async () =>
        (await stack.b<Webhook>('GET', `/ApplicationWebhooks/${created.id}`, stack.operatorKey)).url ===
        'https://hooks.example/edited',
      {
        timeoutMs: 5000,
        description: 'the edited URL through the API',
      },
    );
    await actions.getByRole('button', { name: 'Disable' }).click();
    await page()
      .getByRole('dialog', { name: `Disable webhook ${XSS_NAME}?` })
      .getByRole('button', { name: 'Confirm' })
      .click();
    await waitFor(
      async () => (await stack.b<Webhook>('GET', `/ApplicationWebhooks/${created.id}`, stack.operatorKey)).disabled,
      {
        timeoutMs: 5000,
        description: 'the webhook disabled through the API',
      },
    );

    const channelForm = page().getByRole('form', { name: 'New webhook of webhooks of channels studio' });
    await channelForm.getByLabel('Name').fill('studio hook');
    await channelForm.getByLabel('URL').fill('https://hooks.example/studio');
    await channelForm.getByLabel(/^Events/).fill('channel.activated, connection.connected');
    await channelForm.getByRole('button', { name: 'Save' }).click();
    const channelHooks = await waitFor(
      async () => {
        const found = await hooks('ChannelWebhooks', `channelConfigId=${channelConfig.id}`);
        return found.length === 1 ? found : undefined;
      },
      { timeoutMs: 5000, description: 'the channel webhook through the API' },
    );
    expect(channelHooks[0]).toEqual(
      expect.objectContaining({ name: 'studio hook', events: ['channel.activated', 'connection.connected'] }),
    );
    await page()
      .getByRole('table', { name: /^Webhooks of channels studio/ })
      .locator('tbody tr', { hasText: 'studio hook' })
      .waitFor();
    expect(await page().locator('img').count()).toBe(0);
    expect(browser.dialogs).toEqual([]);
    expect(await browser.seriousAxeViolations()).toEqual([]);
  });

  it('sends a test event to a webhook (it reaches the receiver and the log) and deletes a webhook, with confirmation', async () => {
    const appHooks = async () =>
      (
        await stack.b<{ value: Webhook[] }>(
          'GET',
          `/ApplicationWebhooks?applicationConfigId=${stack.configId}`,
          stack.operatorKey,
        )
      ).value;
    const receiverHook = (await appHooks()).find((hook) => hook.name === 'console receiver')!;
    const reached = stack.receiver.received.length;
    const actions = page().getByRole('group', { name: 'Actions on webhook console receiver' });
    await actions.getByRole('button', { name: 'Send test event' }).click();
    await page()
      .getByRole('dialog', { name: /^Send a test event \(webhook.test\) to webhook console receiver\?/ })
      .getByRole('button', { name: 'Confirm' })
      .click();
    await actions.getByRole('status').waitFor();
    const testQuery = `/WebhookDeliveries?$filter=${encodeURIComponent(
      `eventType eq 'webhook.test' and webhookId eq '${receiverHook.id}'`,
    )}`;
    const delivered = await waitFor(
      async () =>
        (await stack.b<{ value: Array<{ deliveryId: string }> }>('GET', testQuery, stack.operatorKey)).value[0],
      { timeoutMs: 10000, description: 'the test event in the delivery log' },
    );
    await waitFor(() => stack.receiver.received.slice(reached).some((one) => one.webhookId === delivered.deliveryId), {
      timeoutMs: 5000,
      description: 'the test event at the receiver',
    });

    const doomed = (await appHooks()).find((hook) => hook.name === XSS_NAME)!;
    const row = page()
      .getByRole('table', { name: /^Application webhooks/ })
      .locator(`tbody tr[data-row-id="${doomed.id}"]`);
    await page()
      .getByRole('group', { name: `Actions on webhook ${XSS_NAME}` })
      .getByRole('button', { name: 'Delete' })
      .click();
    const dialog = page().getByRole('dialog', { name: new RegExp(`^Delete webhook`) });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await appHooks()).map((hook) => hook.id)).toContain(doomed.id);
    await page()
      .getByRole('group', { name: `Actions on webhook ${XSS_NAME}` })
      .getByRole('button', { name: 'Delete' })
      .click();
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await waitFor(async () => !(await appHooks()).some((hook) => hook.id === doomed.id), {
      timeoutMs: 5000,
      description: 'the webhook deleted through the API',
    });
    await row.waitFor({ state: 'detached', timeout: 5000 });
    expect(browser.dialogs).toEqual([]);
  });

  it('charts usage per day and pixel-count bucket as the API sums it', async () => {
    const usage = new UsageHarness(await connect({ servers: testServers().natsUrl }), ns, stack.db.url);
    try {
      const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
      const [twoDaysAgo, yesterday] = [today - 2 * DAY_MS, today - DAY_MS];
      const hd = participant(applicationId, stack.operatorOrganizationId, 'vera', true, 'usage-room');
      const small = participant(applicationId, stack.operatorOrganizationId, 'sam', true, 'usage-room');
      await usage.publishAll([
        connectionEvent('connection.connected', hd, twoDaysAgo + 9 * 3_600_000, { width: 1280, height: 720 }),
        connectionEvent('connection.closed', hd, twoDaysAgo + 10 * 3_600_000 + 30 * 60_000),
        connectionEvent('connection.connected', small, yesterday + 8 * 3_600_000, { width: 320, height: 240 }),
        connectionEvent('connection.closed', small, yesterday + 8 * 3_600_000 + 45 * 60_000),
      ]);
      await usage.drained();
    } finally {
      await usage.nc.close();
    }
    await browser.open('Usage');
    await page().getByLabel('Application').selectOption(applicationId);
    const table = page().getByRole('table', { name: /^Participant minutes per day/ });
    const day = (offset: number) =>
      new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - offset * DAY_MS).toISOString().slice(0, 10);
    await table.locator(`tbody tr[data-row-id="${day(1)}"]`).waitFor();
    const headers = await table.locator('thead th').allTextContents();
    const cellOf = async (dayText: string, bucket: number) =>
      table
        .locator(`tbody tr[data-row-id="${dayText}"] td`)
        .nth(headers.indexOf(`up to ${bucket} px`) - 1)
        .textContent();
    await expect(cellOf(day(2), 921600)).resolves.toBe('90');
    await expect(cellOf(day(1), 76800)).resolves.toBe('45');
    // Against the API: the hourly records of those days summed per bucket.
    const from = Date.parse(day(2));
    const records = (
      await stack.b<{
        value: Array<{
          startTimestamp: string;
          participantMinutes: Array<{ key: number; value: { usageParticipantMinutes: number } }>;
        }>;
      }>(
        'GET',
        `/Usage?applicationId=${applicationId}&startTimestamp=${from}&endTimestamp=${from + DAY_MS}`,
        stack.operatorKey,
      )
    ).value;
    const apiSum = records
      .flatMap((record) => record.participantMinutes.filter((entry) => entry.key === 921600))
      .reduce((sum, entry) => sum + entry.value.usageParticipantMinutes, 0);
    expect(String(apiSum)).toBe(await cellOf(day(2), 921600));
    await expect(
      page()
        .getByRole('img', { name: /^Participant minutes per day over time/ })
        .count(),
    ).resolves.toBe(1);
    expect(await browser.seriousAxeViolations()).toEqual([]);
  });

  it('creates an organization (its key shown once, and working), disables it, and creates an API key', async () => {
    await browser.open('Organizations');
    const table = page().getByRole('table', { name: /^Organizations/ });
    const listed = await stack.b<{ value: Array<{ id: string }> }>('GET', '/Organizations', stack.operatorKey);
    await waitFor(async () => (await table.locator('tbody tr').count()) === listed.value.length, { timeoutMs: 5000 });
    const create = page().getByRole('form', { name: 'Create organization' });
    await create.getByLabel('Organization name').fill(XSS_NAME);
    await create.getByRole('button', { name: 'Create organization' }).click();
    const secret = page().locator('.secret code');
    await secret.waitFor();
    const key = (await secret.textContent())!;
    expect((await fetch(`${stack.consoleUrl}/api/a/applications`, { headers: { 'x-api-key': key } })).status).toBe(200);
    const row = table.locator('tbody tr', { hasText: XSS_NAME });
    const organizationId = (await row.locator('td').nth(1).textContent())!;
    await row.getByRole('button', { name: 'Disable' }).click();
    await page()
      .getByRole('dialog', { name: /^Disable organization/ })
      .getByRole('button', { name: 'Confirm' })
      .click();
    await waitFor(
      async () =>
        (await stack.b<{ disabled: boolean }>('GET', `/Organizations/${organizationId}`, stack.operatorKey)).disabled,
      { timeoutMs: 5000, description: 'the organization disabled through the API' },
    );
    await waitFor(
      async () =>
        (await fetch(`${stack.consoleUrl}/api/a/applications`, { headers: { 'x-api-key': key } })).status !== 200,
      {
        timeoutMs: 5000,
        description: "the disabled organization's key refused",
      },
    );
    // From the keyboard: the field focused, typed, Enter submits.
    await page().getByRole('form', { name: 'Create API key' }).getByLabel('Key name').focus();
    await page().keyboard.type('console ops');
    await page().keyboard.press('Enter');
    await page().locator('.secret', { hasText: 'API key console ops' }).waitFor();
    const keys = await stack.b<{ value: Array<{ id: string; tag: string; key: string | null }> }>(
      'GET',
      '/ApiKeys',
      stack.operatorKey,
    );
    const made = keys.value.find((one) => one.tag === 'console ops')!;
    expect(made.key).toBeNull();
    const keyRow = page()
      .getByRole('table', { name: /^API keys/ })
      .locator(`tbody tr[data-row-id="${made.id}"]`);
    await keyRow.waitFor();
    const madeKey = (await page()
      .locator('.secret', { hasText: 'API key console ops' })
      .locator('code')
      .textContent())!;
    const throughConsole = async (path: string, apiKey: string) => {
      const answer = await fetch(`${stack.consoleUrl}${path}`, { headers: { 'x-api-key': apiKey } });
      return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
    };
    expect((await throughConsole('/api/a/applications', madeKey)).status).toBe(200);
    await keyRow.getByRole('button', { name: 'Disable' }).click();
    await page()
      .getByRole('dialog', { name: 'Disable API key console ops? It is refused on both interfaces.' })
      .getByRole('button', { name: 'Confirm' })
      .click();
    await waitFor(
      async () => (await stack.b<{ disabled: boolean }>('GET', `/ApiKeys/${made.id}`, stack.operatorKey)).disabled,
      { timeoutMs: 5000, description: 'the key disabled through the API' },
    );
    await waitFor(async () => (await keyRow.locator('td').nth(3).textContent()) === 'disabled', { timeoutMs: 5000 });
    // Refused through the console's forwarding, on both interfaces, as an unknown key is.
    const unknownKey = 'sb_no-such-key-anywhere-0123456789';
    await waitFor(async () => (await throughConsole('/api/a/applications', madeKey)).status === 401, {
      timeoutMs: 5000,
      description: 'the disabled key refused on interface A',
    });
    for (const path of ['/api/a/applications', '/api/b/ApiKeys']) {
      const [refused, unknown] = [await throughConsole(path, madeKey), await throughConsole(path, unknownKey)];
      expect(refused.status).toBe(401);
      expect(unknown.status).toBe(401);
      expect(Object.keys(refused.body).sort()).toEqual(Object.keys(unknown.body).sort());
      expect(refused.body.title ?? refused.body.error).toEqual(unknown.body.title ?? unknown.body.error);
    }
    await keyRow.getByRole('button', { name: 'Enable' }).click();
    await page()
      .getByRole('dialog', { name: 'Enable API key console ops again?' })
      .getByRole('button', { name: 'Confirm' })
      .click();
    await waitFor(async () => (await throughConsole('/api/b/ApiKeys', madeKey)).status === 200, {
      timeoutMs: 5000,
      description: 'the key enabled again',
    });
    expect(await page().locator('img').count()).toBe(0);
    expect(browser.dialogs).toEqual([]);
    expect(await browser.seriousAxeViolations()).toEqual([]);
    expect(browser.cspViolations).toEqual([]);
  });
});
