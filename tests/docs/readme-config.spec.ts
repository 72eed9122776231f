// The configuration table of README.md is generated from the settings the services declare
// (apps/<service>/src/config.ts); this test fails when the README block is missing or stale.
// Fix: `npm run docs:config` (builds, then rewrites the README block).

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  END_MARKER,
  START_MARKER,
  discoverServices,
  extractBlock,
  renderConfigTable,
  type ServiceSettings,
  type SettingLike,
} from '../../tools/docs/config-table-core.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

async function loadSourceSettings(): Promise<ServiceSettings[]> {
  const out: ServiceSettings[] = [];
  for (const { dir, service } of discoverServices(ROOT)) {
    const file = path.join(ROOT, 'apps', dir, 'src', 'config.ts');
    const module = (await import(pathToFileURL(file).href)) as { settings?: Record<string, SettingLike> };
    if (!module.settings) throw new Error(`apps/${dir}/src/config.ts exports no \`settings\``);
    out.push({ service, settings: module.settings });
  }
  return out;
}

function fixFor(relative: string): string {
  return `run \`npm run build && node tools/docs/config-table.mjs --write ${relative}\``;
}

function readBlock(relative: string): string {
  const file = path.join(ROOT, relative);
  if (!fs.existsSync(file)) {
    throw new Error(
      `${relative} does not exist: it must hold the configuration table between ${START_MARKER} and ${END_MARKER} (${fixFor(relative)}).`,
    );
  }
  const block = extractBlock(fs.readFileSync(file, 'utf8'));
  if (block === undefined) {
    throw new Error(
      `${relative} has no ${START_MARKER} ... ${END_MARKER} block: add the two markers where the configuration table goes, then ${fixFor(relative)}.`,
    );
  }
  return block;
}

/** The rows that differ between the block of `relative` and the generated table; null when it is current. */
function staleRows(relative: string, table: string): string | null {
  const block = readBlock(relative);
  if (block === table.trim()) return null;
  const have = block.split('\n');
  const want = table.trim().split('\n');
  const missing = block === '' ? [] : want.filter((l) => !have.includes(l)).map((l) => `  + ${l}`);
  const stale = block === '' ? [] : have.filter((l) => !want.includes(l)).map((l) => `  - ${l}`);
  return [
    `The configuration table of ${relative} is ${block === '' ? 'empty' : 'out of date'}: ${fixFor(relative)}.`,
    ...(missing.length ? ['Rows the generated table has and the file lacks:', ...missing] : []),
    ...(stale.length ? ['Rows of the file that the generated table does not have:', ...stale] : []),
    ...(block !== '' && !missing.length && !stale.length ? ['(same rows, different order or spacing)'] : []),
  ].join('\n');
}

describe('configuration table', () => {
  let table: string;
  beforeAll(async () => {
    table = renderConfigTable(await loadSourceSettings());
  });

  it('covers the nine services and every setting they declare', async () => {
    const services = await loadSourceSettings();
    expect(services.map((s) => s.service).sort()).toEqual([
      'admin-gateway',
      'console',
      'demo-room',
      'management-api',
      'media-agent',
      'recording-service',
      'runtime-registry',
      'usage-aggregator',
      'webhook-worker',
    ]);
    for (const { settings } of services) {
      for (const setting of Object.values(settings)) expect(table).toContain(`| \`${setting.env}\``);
    }
    expect(table).toMatch(/\| `DATABASE_URL` \(sensitive/);
  });

  it('README.md holds the current table between the config-table markers', () => {
    expect(staleRows('README.md', table)).toBeNull();
  });
});
