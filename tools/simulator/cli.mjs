#!/usr/bin/env node
// The simulator's command line: `npm run simulate -- --gateway ws://127.0.0.1:8080 ...`.
// Prints the JSON report on stdout. Exit codes: 0 every client connected, 1 some failed, 2 bad
// options or set-up failure. Ctrl-C ends the churn early and still unregisters and reports.
import { parseArgs, USAGE } from './src/args.mjs';
import { Simulation } from './src/simulation.mjs';

async function main(argv) {
  let parsed;
  try {
    parsed = parseArgs(argv);
  } catch (e) {
    process.stderr.write(`simulator: ${e.message}\n\n${USAGE}\n`);
    return 2;
  }
  if (parsed.flags.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort());
  const log = parsed.flags.quiet ? undefined : (event) => process.stderr.write(`${JSON.stringify(event)}\n`);
  const simulation = new Simulation({ ...parsed.options, signal: abort.signal, log });
  let failed = false;
  try {
    await simulation.start();
    await simulation.churn();
  } catch (e) {
    process.stderr.write(`simulator: ${e.message}\n`);
    failed = true;
  } finally {
    await simulation.stop();
  }
  const report = simulation.report();
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  if (failed) return 2;
  return report.clients.failed > 0 ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
