import { ConfigError } from '@switchboard/config';
import { buildConsole } from './app.js';
import { loadConsoleConfig, type ConsoleConfig } from './config.js';
import { ConnectionStatsStore, followConnectionStats } from './connection-stats.js';

/** Exit code of a refused configuration, as the other services (sysexits EX_CONFIG). */
const EXIT_CONFIG = 78;

let config: ConsoleConfig;
try {
  config = loadConsoleConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(EXIT_CONFIG);
}

// The charts' stats come from the runtime's events: without NATS the console runs without them.
const stats = config.natsUrl ? new ConnectionStatsStore() : undefined;
const nats = stats ? await followConnectionStats(config.natsUrl!, config.natsNamespace, stats) : undefined;
const app = await buildConsole(config, undefined, stats);
await app.listen({ host: config.httpHost, port: config.httpPort });
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void Promise.all([app.close(), nats?.close()]).then(() => process.exit(0));
  });
}
