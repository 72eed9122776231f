// The bench's command-line options (see README, "How to run") and the names it runs under.
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
export const RATE = arg('rate', 1000);
export const SECONDS = arg('seconds', 20);
export const WARMUP_SECONDS = arg('warmup', 3);
export const BURST = arg('burst', 20000);
// Bursts, each followed by a raw round: the ratio is the median of the rounds' ratios (see README).
export const ROUNDS = Math.max(1, arg('rounds', 3));
export const RAW = arg('raw', 20000);
export const CONCURRENCY = arg('concurrency', 100);
// The receiver answers this many ms after it read a request (a remote receiver's round trip); 0: at once.
export const RECEIVER_DELAY_MS = arg('receiver-delay', 0);
// The receiver's HTTP server: lean (a bare socket) or node (node:http); see receiver.mjs.
export const RECEIVER = (() => {
  const i = process.argv.indexOf('--receiver');
  return i > 0 ? process.argv[i + 1] : 'lean';
})();
// Channels the events are spread over: with one webhook, the ordering keys (one delivery in flight each).
export const CHANNELS = arg('channels', 100);
export const JSON_OUT = process.argv.includes('--json');
// Per-100 ms timeline of the burst: cores used per process, the machine's idle and stolen cores,
// the worker consumer's progress, events published and deliveries received per bucket (see timeline.mjs).
export const TIMELINE = process.argv.includes('--timeline');

export const NS = 'bench';
export const APP = 'bench-app';
export const ORG = 'bench-org';
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const log = (...a) => (JSON_OUT ? undefined : console.log(...a));
