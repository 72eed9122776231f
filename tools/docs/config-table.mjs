#!/usr/bin/env node
// Prints the Markdown configuration table of every service, built from the settings of the BUILT
// apps (apps/<service>/dist/config.js: run `npm run build` first).
//
//   node tools/docs/config-table.mjs                    print the table
//   node tools/docs/config-table.mjs --check README.md  exit 1 when the block between
//                                                       <!-- config-table:start --> and
//                                                       <!-- config-table:end --> is not the table
//   node tools/docs/config-table.mjs --write README.md  rewrite that block
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  END_MARKER,
  START_MARKER,
  blockMatches,
  discoverServices,
  extractBlock,
  renderConfigTable,
  replaceBlock,
} from './config-table-core.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const USAGE = 'usage: node tools/docs/config-table.mjs [--check FILE | --write FILE]';

function fail(message, code = 2) {
  process.stderr.write(`config-table: ${message}\n`);
  process.exit(code);
}

async function loadServices() {
  const services = [];
  for (const { dir, service } of discoverServices(ROOT)) {
    const file = path.join(ROOT, 'apps', dir, 'dist', 'config.js');
    if (!fs.existsSync(file)) fail(`${path.relative(ROOT, file)} does not exist: run \`npm run build\` first.`);
    const module = await import(pathToFileURL(file).href);
    if (!module.settings || typeof module.settings !== 'object') {
      fail(`${path.relative(ROOT, file)} exports no \`settings\` object.`);
    }
    services.push({ service, settings: module.settings });
  }
  if (services.length === 0) fail('no service found under apps/ (a package.json with a "switchboard" key).');
  return services;
}

const [mode, target, ...extra] = process.argv.slice(2);
if (extra.length > 0 || (mode !== undefined && !['--check', '--write'].includes(mode)) || (mode && !target))
  fail(USAGE);

const table = renderConfigTable(await loadServices());
if (mode === undefined) {
  process.stdout.write(table);
} else {
  const file = path.resolve(process.cwd(), target);
  if (!fs.existsSync(file)) fail(`${target} does not exist.`);
  const text = fs.readFileSync(file, 'utf8');
  if (extractBlock(text) === undefined) {
    fail(`${target} has no ${START_MARKER} ... ${END_MARKER} block: add the two markers where the table goes.`);
  }
  if (mode === '--check') {
    if (!blockMatches(text, table)) {
      fail(
        `the configuration table of ${target} is out of date: run \`node tools/docs/config-table.mjs --write ${target}\`.`,
        1,
      );
    }
    process.stdout.write(`config-table: ${target} is up to date.\n`);
  } else {
    const next = replaceBlock(text, table);
    if (next !== text) fs.writeFileSync(file, next);
    process.stdout.write(`config-table: ${next === text ? 'unchanged' : 'rewrote'} the table of ${target}.\n`);
  }
}
