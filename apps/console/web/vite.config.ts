import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// No inline script or style in the output: the console is served with script-src/style-src 'self'.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  build: {
    outDir: fileURLToPath(new URL('../dist/public', import.meta.url)),
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
  },
});
