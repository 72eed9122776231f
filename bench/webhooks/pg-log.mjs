// `node bench/webhooks/pg-log.mjs`: one command, also on a fresh clone. See bench/lib/entry.mjs: it runs
// `npm install` when needed and `npm run build`, then pg-log-main.mjs on the services' Node.
import { runBench } from '../lib/entry.mjs';

await runBench(new URL('./pg-log-main.mjs', import.meta.url));
