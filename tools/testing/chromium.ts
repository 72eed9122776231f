/**
 * The system's Chromium (the Debian `chromium` package), launched headless through playwright-core.
 * Nothing downloads a browser: a missing binary fails with what to install.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/snap/bin/chromium'];

/** CHROMIUM_PATH when set, else the first system Chromium found. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.CHROMIUM_PATH;
  if (configured) {
    if (!existsSync(configured)) throw new Error(`CHROMIUM_PATH=${configured} does not exist.`);
    return configured;
  }
  const found = CANDIDATES.find((candidate) => existsSync(candidate));
  if (!found) {
    throw new Error(
      `No Chromium found (looked at ${CANDIDATES.join(', ')}): install the Debian package ` +
        '(`apt-get install -y chromium`) or set CHROMIUM_PATH.',
    );
  }
  return found;
}

/** A headless Chromium; root (CI containers) cannot use its sandbox. `args`: more command-line flags. */
export async function launchChromium(args: string[] = []): Promise<Browser> {
  const runningAsRoot = process.getuid?.() === 0;
  return chromium.launch({
    executablePath: findChromium(),
    headless: true,
    args: [...(runningAsRoot ? ['--no-sandbox'] : []), ...args],
  });
}
