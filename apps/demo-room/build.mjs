// The page of the demo room in dist/public: its script (web/page.ts, bundled, the SDK left outside),
// the SDK's browser bundle beside it, the HTML and the style sheet. One origin serves them all.
import { copyFileSync, mkdirSync } from 'node:fs';
import { build } from 'rolldown';

const out = 'dist/public';
mkdirSync(out, { recursive: true });
await build({
  input: 'web/page.ts',
  platform: 'browser',
  logLevel: 'warn',
  external: ['@switchboard/client'],
  output: {
    file: `${out}/demo-room.js`,
    format: 'esm',
    minify: true,
    paths: { '@switchboard/client': '/switchboard-client.js' },
  },
});
copyFileSync('../../libs/client/dist/browser/switchboard-client.min.js', `${out}/switchboard-client.js`);
copyFileSync('web/index.html', `${out}/index.html`);
copyFileSync('web/demo-room.css', `${out}/demo-room.css`);
