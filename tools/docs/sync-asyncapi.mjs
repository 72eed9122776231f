#!/usr/bin/env node
// Prints the AsyncAPI 3.0 document of the /sync client edge, as every gateway serves it at
// /admin/api/v1.0/asyncapi.json, built from the BUILT contracts (run `npm run build` first).
//
//   node tools/docs/sync-asyncapi.mjs [ws-url]   the URL clients reach /sync at
//                                                (default ws://127.0.0.1:8080/sync)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CONTRACTS = path.join(ROOT, 'libs', 'contracts', 'dist', 'index.js');

if (!fs.existsSync(CONTRACTS)) {
  process.stderr.write(
    `sync-asyncapi: ${path.relative(ROOT, CONTRACTS)} does not exist: run \`npm run build\` first.\n`,
  );
  process.exit(2);
}
const url = process.argv[2] ?? 'ws://127.0.0.1:8080/sync';
const { buildSyncAsyncApi } = await import(pathToFileURL(CONTRACTS).href);
process.stdout.write(`${JSON.stringify(buildSyncAsyncApi({ url }), null, 2)}\n`);
