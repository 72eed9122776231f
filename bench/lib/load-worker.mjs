// Child process of `loadTestInChild` (load.mjs): runs one closed-loop load test with the options in
// argv[2] (JSON), reports to the parent over IPC and exits when the parent says so.
import { loadTest } from './load.mjs';

process.on('message', () => process.exit(0));
const result = await loadTest(JSON.parse(process.argv[2]), { measuring: () => process.send({ measuring: true }) });
process.send({ result });
