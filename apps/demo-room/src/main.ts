import { fileURLToPath } from 'node:url';
import { ConfigError } from '@switchboard/config';
import { buildDemoRoom } from './app.js';
import { loadDemoRoomConfig, type DemoRoomConfig } from './config.js';

/** Exit code of a refused configuration, as the other services (sysexits EX_CONFIG). */
const EXIT_CONFIG = 78;

let config: DemoRoomConfig;
try {
  config = loadDemoRoomConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(EXIT_CONFIG);
}

const app = await buildDemoRoom(config, { publicDir: fileURLToPath(new URL('./public/', import.meta.url)) });
await app.listen({ host: config.httpHost, port: config.httpPort });
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void app.close().then(() => process.exit(0));
  });
}
