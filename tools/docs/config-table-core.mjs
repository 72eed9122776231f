// The configuration table of README.md, generated from the settings every service declares in
// apps/<service>/src/config.ts (`export const settings = { key: Setting, ... }`, libs/config).
// Pure functions except discoverServices (reads apps/*/package.json). Plain Node built-ins only:
// used by tools/docs/config-table.mjs (built dist/config.js) and by tests/docs (TS sources).
import fs from 'node:fs';
import path from 'node:path';

export const START_MARKER = '<!-- config-table:start -->';
export const END_MARKER = '<!-- config-table:end -->';

/**
 * Services declared under `<root>/apps` (a package.json with a "switchboard" key), sorted by
 * service name: [{ dir, service, port }].
 */
export function discoverServices(root) {
  const appsDir = path.join(root, 'apps');
  const services = [];
  for (const entry of fs.readdirSync(appsDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const file = path.join(appsDir, entry.name, 'package.json');
    if (!fs.existsSync(file)) continue;
    const decl = JSON.parse(fs.readFileSync(file, 'utf8')).switchboard;
    if (!decl || typeof decl.service !== 'string') continue;
    services.push({ dir: entry.name, service: decl.service, port: decl.port });
  }
  return services.sort((a, b) => a.service.localeCompare(b.service));
}

/** A table cell: no line breaks, no unescaped pipes. */
function cell(text) {
  return String(text).replace(/\r?\n/g, ' ').replace(/\|/g, '\\|').trim();
}

function code(value) {
  if (value === undefined) return '';
  if (value === '') return '`""`';
  return `\`${value}\``;
}

/**
 * Groups `entries` ({ service, value }, in service order) by value: one rendering when all
 * services agree, otherwise one per distinct value, naming its services (`value (a, b)` or,
 * with `prefix`, `a, b: value`).
 */
function perService(entries, render, { prefix = false } = {}) {
  const groups = new Map();
  for (const { service, value } of entries) {
    const key = JSON.stringify(value ?? null);
    if (!groups.has(key)) groups.set(key, { value, services: [] });
    groups.get(key).services.push(service);
  }
  if (groups.size === 1) return render([...groups.values()][0].value);
  return [...groups.values()]
    .map((g) =>
      prefix ? `${g.services.join(', ')}: ${render(g.value)}` : `${render(g.value)} (${g.services.join(', ')})`,
    )
    .join('; ');
}

/**
 * One row per environment variable: [{ env, services, sensitive, entries }], where entries holds
 * each using service's Setting. Rows used by more services come first, then by name.
 * `services` is [{ service, settings }] with `settings` the exported object of a config module.
 */
export function configRows(services) {
  const byEnv = new Map();
  for (const { service, settings } of services) {
    for (const setting of Object.values(settings)) {
      if (!setting || typeof setting.env !== 'string') continue;
      if (!byEnv.has(setting.env)) byEnv.set(setting.env, []);
      byEnv.get(setting.env).push({ service, setting });
    }
  }
  return [...byEnv.entries()]
    .map(([env, entries]) => ({
      env,
      entries,
      services: entries.map((e) => e.service),
      sensitive: entries.some((e) => e.setting.sensitive),
    }))
    .sort((a, b) => b.services.length - a.services.length || a.env.localeCompare(b.env));
}

/** The Markdown table (ends with a newline). */
export function renderConfigTable(services) {
  const all = services.map((s) => s.service);
  const lines = ['| Setting | Services | Default | Required | Description |', '|---|---|---|---|---|'];
  for (const row of configRows(services)) {
    const name = `\`${row.env}\`${row.sensitive ? ' (sensitive: keep it in a secret)' : ''}`;
    const usedBy = row.services.length === all.length && all.length > 1 ? 'all' : row.services.join(', ');
    const fieldOf = (pick) => row.entries.map(({ service, setting }) => ({ service, value: pick(setting) }));
    // Required settings have no default ("–"); optional ones without a default are left unset.
    const defaults = perService(
      fieldOf((s) =>
        s.documentedDefault !== undefined
          ? { value: s.documentedDefault }
          : { none: s.required ? 'required' : 'unset' },
      ),
      (d) => (d.none === 'required' ? '–' : d.none === 'unset' ? 'unset' : code(d.value)),
    );
    const required = perService(
      fieldOf((s) => Boolean(s.required)),
      (v) => (v ? 'yes' : 'no'),
    );
    const description = perService(
      fieldOf((s) => s.description),
      (v) => v,
      { prefix: true },
    );
    lines.push(`| ${[name, usedBy, defaults, required, description].map(cell).join(' | ')} |`);
  }
  return `${lines.join('\n')}\n`;
}

/** The text between the markers (trimmed), or undefined when a marker is missing. */
export function extractBlock(text) {
  const start = text.indexOf(START_MARKER);
  const end = text.indexOf(END_MARKER);
  if (start < 0 || end < 0 || end < start) return undefined;
  return text.slice(start + START_MARKER.length, end).trim();
}

/** `text` with the block between the markers replaced by `table`; throws when a marker is missing. */
export function replaceBlock(text, table) {
  const start = text.indexOf(START_MARKER);
  const end = text.indexOf(END_MARKER);
  if (start < 0 || end < 0 || end < start) {
    throw new Error(`the markers ${START_MARKER} and ${END_MARKER} are missing (add them where the table goes)`);
  }
  return `${text.slice(0, start + START_MARKER.length)}\n${table.trim()}\n${text.slice(end)}`;
}

/** True when the block of `text` equals `table` (surrounding whitespace ignored). */
export function blockMatches(text, table) {
  const block = extractBlock(text);
  return block !== undefined && block === table.trim();
}
