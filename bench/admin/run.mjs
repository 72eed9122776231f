// `node bench/admin/run.mjs`: one command, also on a fresh clone. See bench/lib/entry.mjs: it runs
// `npm install` when needed and `npm run build`, then main.mjs on the services' Node.
import { runBench } from '../lib/entry.mjs';

await runBench(new URL('./main.mjs', import.meta.url));
