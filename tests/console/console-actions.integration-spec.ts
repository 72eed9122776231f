/**
 * Operator actions at the user, device and connection levels, and a connection's charts: each
 * action confirmed in the console, its effect read through interface A and seen by the live client.
 */
import { testNamespace, waitFor } from '@switchboard/testing';
import { ConsoleBrowser } from './console-browser.js';
import { ConsoleStack, type LiveClient, type Push } from './console-stack.js';

interface ConnectionInfo {
  id: string;
  recording: boolean;
  localAudioMuted: boolean;
  localVideoMuted: boolean;
  localAudioUnmuteDisabled: boolean;
}

describe('operator console: actions at every level', () => {
  const ns = testNamespace('console_actions');
  const applicationId = `app-${ns}`.replace(/_/g, '-');
  const stack = new ConsoleStack(ns, applicationId);
  const browser = new ConsoleBrowser();
  const clients: Record<string, LiveClient> = {};
  const channelPath = `/applications/${applicationId}/channels/lobby`;
  const connectionPath = (user: string, device: string) =>
    `${channelPath}/users/${user}/devices/${device}/clients/${user}-1/connections/cn-${user}-1`;
  const settingsPush = (client: LiveClient, check: (settings: Record<string, unknown>) => boolean) =>
    waitFor(
      () =>
        client.pushes.some((push: Push) => push.type === 'settings' && check(push.settings as Record<string, unknown>)),
      { timeoutMs: 5000, description: 'the settings push at the live client' },
    );

  beforeAll(async () => {
    await Promise.all([browser.launch(), stack.start()]);
    for (const [user, device] of [
      ['alice', 'alice-laptop'],
      ['bob', 'bob-phone'],
      ['carol', 'carol-tablet'],
    ] as const) {
      clients[user] = await stack.connectClient(user, device, `${user}-1`, 'lobby');
    }
    await browser.signIn(stack.consoleUrl, stack.operatorKey);
    await browser.page.getByRole('button', { name: applicationId }).click();
    await browser.page.getByRole('button', { name: 'lobby', exact: true }).click();
  }, 60000);

  afterAll(async () => {
    await browser.close();
    await stack.stop();
  });

  /** Clicks an action of a level, checks the question and confirms it. */
  async function confirmAction(target: string, label: string, question: string, message?: string) {
    const actions = browser.page.getByRole('group', { name: `Actions on ${target}` });
    await actions.getByRole('button', { name: label, exact: true }).click();
    const dialog = browser.page.getByRole('dialog', { name: question });
    if (message !== undefined) await dialog.getByLabel('Message').fill(message);
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    // The dialog closes once the API answered success (a failure stays in it, as an alert).
    await dialog.waitFor({ state: 'hidden' });
    expect(await dialog.getByRole('alert').count()).toBe(0);
  }

  it('lists the devices and users of the channel as the API returns them', async () => {
    const devices = await stack.a<Array<{ id: string; userId: string }>>('GET', `${channelPath}/devices`);
    const table = browser.page.getByRole('table', { name: /^Devices/ });
    await waitFor(async () => (await table.locator('tbody tr').count()) === devices.length, { timeoutMs: 5000 });
    const shown = await table
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((row) => `${row.children[0]?.textContent}/${row.children[1]?.textContent}`));
    const byText = (one: string, other: string) => one.localeCompare(other);
    expect(shown.toSorted(byText)).toEqual(devices.map((device) => `${device.id}/${device.userId}`).toSorted(byText));
    await browser.screenshot('console-live');
  });

  it('mutes and unmutes a user in the channel: its connection follows and the live client is told', async () => {
    await confirmAction('user alice', 'Mute audio', 'Mute the audio of user alice?');
    await waitFor(
      async () => (await stack.a<ConnectionInfo>('GET', connectionPath('alice', 'alice-laptop'))).localAudioMuted,
      {
        timeoutMs: 5000,
        description: 'alice muted through the API',
      },
    );
    await settingsPush(clients.alice!, (settings) => settings.audioMuted === true);
    expect((await stack.a<ConnectionInfo>('GET', connectionPath('bob', 'bob-phone'))).localAudioMuted).toBe(false);
    await confirmAction('user alice', 'Unmute audio', 'Unmute the audio of user alice?');
    await waitFor(
      async () => !(await stack.a<ConnectionInfo>('GET', connectionPath('alice', 'alice-laptop'))).localAudioMuted,
      { timeoutMs: 5000, description: 'alice unmuted through the API' },
    );
    await settingsPush(clients.alice!, (settings) => settings.audioMuted === false);
  });

  it('sends a server message to a user in the channel', async () => {
    await confirmAction('user carol', 'Send message', 'Send a server message to user carol:', 'hello <i>carol</i>');
    await waitFor(() => JSON.stringify(clients.carol!.pushes).includes('hello <i>carol</i>'), {
      timeoutMs: 5000,
      description: 'the message at carol',
    });
    expect(JSON.stringify(clients.bob!.pushes)).not.toContain('hello <i>carol</i>');
  });

  it('disables unmuting for a device in the channel', async () => {
    await confirmAction('device bob-phone', 'Disable unmuting', 'Stop device bob-phone from unmuting audio and video?');
    await waitFor(
      async () => (await stack.a<ConnectionInfo>('GET', connectionPath('bob', 'bob-phone'))).localAudioUnmuteDisabled,
      { timeoutMs: 5000, description: 'bob unmute-disabled through the API' },
    );
    await settingsPush(clients.bob!, (settings) => settings.audioUnmuteDisabled === true);
    const row = browser.page.getByRole('table', { name: /^Connections/ }).locator('tbody tr', { hasText: 'cn-bob-1' });
    await waitFor(async () => (await row.locator('td').nth(7).textContent()) === 'yes', { timeoutMs: 5000 });
  });

  it('starts and stops recording a connection', async () => {
    const path = connectionPath('carol', 'carol-tablet');
    await confirmAction('connection cn-carol-1', 'Start recording', 'Start recording connection cn-carol-1?');
    await waitFor(async () => (await stack.a<ConnectionInfo>('GET', path)).recording, {
      timeoutMs: 5000,
      description: 'carol recorded through the API',
    });
    await settingsPush(clients.carol!, (settings) => settings.recording === true);
    const row = browser.page
      .getByRole('table', { name: /^Connections/ })
      .locator('tbody tr', { hasText: 'cn-carol-1' });
    await waitFor(async () => (await row.locator('td').nth(8).textContent()) === 'yes', { timeoutMs: 5000 });
    await confirmAction('connection cn-carol-1', 'Stop recording', 'Stop recording connection cn-carol-1?');
    await waitFor(async () => !(await stack.a<ConnectionInfo>('GET', path)).recording, { timeoutMs: 5000 });
    await settingsPush(clients.carol!, (settings) => settings.recording === false);
  });

  it("charts a connection's bitrate, loss, jitter and RTT from the stats its live client reports", async () => {
    const samples = [
      {
        sendBitrate: 800000,
        receiveBitrate: 1200000,
        packetsReceived: 1000,
        packetsLost: 0,
        jitter: 3,
        roundTripTime: 40,
      },
      {
        sendBitrate: 900000,
        receiveBitrate: 1100000,
        packetsReceived: 1900,
        packetsLost: 100,
        jitter: 5,
        roundTripTime: 55,
      },
      {
        sendBitrate: 700000,
        receiveBitrate: 1000000,
        packetsReceived: 2800,
        packetsLost: 200,
        jitter: 4,
        roundTripTime: 42,
      },
    ];
    await browser.page
      .getByRole('table', { name: /^Connections/ })
      .getByRole('button', { name: 'cn-alice-1' })
      .click();
    const detail = browser.page.getByRole('region', { name: 'Connection cn-alice-1' });
    await detail.waitFor();
    // Sampled while the page is open: the charts appear with the first report and grow with the next ones.
    const report = (stats: Record<string, number>) =>
      clients.alice!.sync.request('stats', { connectionId: 'cn-alice-1', stats: { ...stats, timestamp: Date.now() } });
    const shownSamples = (count: number) =>
      waitFor(async () => (await detail.getByText(`(${count} samples)`).count()) === 4, {
        timeoutMs: 5000,
        description: `${count} samples in the charts`,
      });
    await report(samples[0]!);
    await shownSamples(1);
    for (const stats of samples.slice(1)) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      await report(stats);
    }
    await shownSamples(samples.length);
    const statsUrl = `${stack.consoleUrl}/api/stats/${applicationId}/lobby/alice/alice-laptop/alice-1/cn-alice-1`;
    const kept = (await (await fetch(statsUrl, { headers: { 'x-api-key': stack.operatorKey } })).json()) as {
      samples: Array<Record<string, number>>;
    };
    expect(kept.samples).toEqual(samples.map((sample) => expect.objectContaining(sample)));
    const latest = async (title: string) =>
      detail.locator('figure', { hasText: title }).locator('.latest').textContent();
    await expect(latest('Bitrate')).resolves.toBe('latest: send 700 kbit/s, receive 1000 kbit/s');
    await expect(latest('Packet loss')).resolves.toBe('latest: lost 10 %');
    await expect(latest('Jitter')).resolves.toBe('latest: jitter 4 ms');
    await expect(latest('Round-trip time')).resolves.toBe('latest: RTT 42 ms');
    expect(await detail.locator('figure canvas').count()).toBe(4);
    await expect(detail.getByRole('img', { name: /^Packet loss over time/ }).count()).resolves.toBe(1);
    expect(await browser.seriousAxeViolations()).toEqual([]);
    expect(browser.cspViolations).toEqual([]);
    await browser.screenshot('console-connection-charts', detail.locator('.charts'));
    const refused = await fetch(statsUrl, { headers: { 'x-api-key': 'not-a-key' } });
    expect(refused.status).toBe(401);
  });

  it('kicks one connection: it leaves the API and the live client is told', async () => {
    await confirmAction('connection cn-carol-1', 'Kick', 'Kick connection cn-carol-1?');
    await waitFor(
      async () => {
        const connections = await stack.a<ConnectionInfo[]>('GET', `${channelPath}/connections`);
        return !connections.some((connection) => connection.id === 'cn-carol-1');
      },
      { timeoutMs: 5000, description: 'cn-carol-1 gone from the API' },
    );
    await waitFor(
      () => clients.carol!.pushes.some((push) => push.type === 'kicked' || push.type === 'connection.ended'),
      {
        timeoutMs: 5000,
        description: 'carol told of the kick',
      },
    );
    await browser.page
      .getByRole('table', { name: /^Connections/ })
      .locator('tbody tr', { hasText: 'cn-carol-1' })
      .waitFor({ state: 'detached' });
  });

  it('axe-core finds no serious violation on the channel view with every level', async () => {
    expect(await browser.seriousAxeViolations()).toEqual([]);
    expect(browser.cspViolations).toEqual([]);
  });
});
