/** The browser side of the console tests: one headless Chromium page signed in, axe-core, what the page let slip. */
import path from 'node:path';
import axe from 'axe-core';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { launchChromium } from '../../tools/testing/chromium.js';

export class ConsoleBrowser {
  browser!: Browser;
  context!: BrowserContext;
  page!: Page;
  /** Script dialogs (alert) and CSP refusals seen in the page: an injected script would show here. */
  readonly dialogs: string[] = [];
  readonly cspViolations: string[] = [];

  async launch(): Promise<void> {
    this.browser = await launchChromium();
    this.context = await this.browser.newContext({ viewport: { width: 1440, height: 900 } });
    this.page = await this.context.newPage();
    this.page.on('dialog', (dialog) => {
      this.dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    this.page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) this.cspViolations.push(message.text());
    });
  }

  async signIn(consoleUrl: string, key: string, target = this.page): Promise<void> {
    await target.goto(consoleUrl);
    await target.getByLabel('API key').fill(key);
    await target.getByRole('button', { name: 'Sign in', exact: true }).click();
    await target.getByRole('button', { name: 'Sign out' }).waitFor();
  }

  /** Opens a page of the console from its navigation. */
  async open(name: string): Promise<void> {
    await this.page.getByRole('navigation').getByRole('button', { name, exact: true }).click();
  }

  /** The serious and critical axe-core violations of the page as it is now (expected: none). */
  async seriousAxeViolations(target = this.page): Promise<string[]> {
    // Injected once per document (the console is one page: its navigation keeps the document).
    if (!(await target.evaluate("typeof window.axe === 'object'"))) await target.evaluate(axe.source);
    const results = (await target.evaluate("axe.run(document, { resultTypes: ['violations'] })")) as axe.AxeResults;
    return results.violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
  }

  /** With CONSOLE_SCREENSHOTS_DIR set (npm run console:screenshots): writes <dir>/<name>.png of the page or a part. */
  async screenshot(name: string, part?: Locator): Promise<void> {
    const dir = process.env.CONSOLE_SCREENSHOTS_DIR;
    if (!dir) return;
    const file = path.resolve(dir, `${name}.png`);
    await (part ? part.screenshot({ path: file }) : this.page.screenshot({ path: file }));
  }

  async close(): Promise<void> {
    await this.browser?.close();
  }
}
