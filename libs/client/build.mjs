// The browser bundle of @switchboard/client (ESM, minified) and its size budget: the build prints
// the gzipped figure and fails above BUDGET_BYTES.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { build } from 'rolldown';

const BUDGET_BYTES = 30 * 1024;
const outFile = 'dist/browser/switchboard-client.min.js';

await build({
  input: 'src/index.ts',
  platform: 'browser',
  logLevel: 'warn',
  output: { file: outFile, format: 'esm', minify: true, sourcemap: false },
});

const minified = readFileSync(outFile);
// The browser path imports nothing of Node (WebSocket and RTCPeerConnection are passed in or global).
const nodeImport = /\bfrom\s*["'`](node:[^"'`]+)|\brequire\(/.exec(minified.toString());
if (nodeImport) {
  console.error(`@switchboard/client: the browser bundle imports Node (${nodeImport[0]})`);
  process.exit(1);
}
const gzipped = gzipSync(minified, { level: 9 }).length;
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
console.log(
  `@switchboard/client browser bundle: ${kb(minified.length)} minified, ${kb(gzipped)} gzipped (budget ${kb(BUDGET_BYTES)})`,
);
if (gzipped > BUDGET_BYTES) {
  console.error(`@switchboard/client: the browser bundle is over its budget of ${kb(BUDGET_BYTES)} gzipped`);
  process.exit(1);
}
