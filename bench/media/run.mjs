// `node bench/media/run.mjs`: one command, also on a fresh clone. See bench/lib/entry.mjs: it runs
// `npm install` when needed and `npm run build`, then main.mjs on the services' Node (main.mjs then
// runs itself again inside a network namespace of its own).
import { runBench } from '../lib/entry.mjs';

await runBench(new URL('./main.mjs', import.meta.url));
