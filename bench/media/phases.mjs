// The phases of the media benchmark (see README.md): join to first RTP, CPU per forwarded stream,
// operator mute to silence, pairs held. Each takes a controller (controllers.mjs, control-plane.mjs).
import fs from 'node:fs';
import { cpuMeter } from '../lib/cpu.mjs';
import { AUDIO_PER_SECOND, connected, Publisher, Subscriber, VIDEO_PER_SECOND } from './clients.mjs';

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const log = (line) => process.stderr.write(`${line}\n`);

export function percentile(values, p) {
  if (!values.length) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function until(predicate, timeoutMs, what) {
  const deadline = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
}

/** Busy and total jiffies of the whole machine (/proc/stat). */
function systemTicks() {
  const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - fields[3] - fields[4], total };
}

/** Adds `count` publisher/subscriber pairs to `room` (each subscriber receives its own publisher). */
export async function addPairs(controller, room, source, pairs, count) {
  const start = pairs.length;
  for (let i = start; i < start + count; i++) {
    const publisher = new Publisher();
    const answer = await controller.publish(room, `pub-${i}`, await publisher.offer());
    await publisher.pc.setRemoteDescription(answer);
    await connected(publisher.pc, 15000);
    source.publishers.add(publisher);
    const subscriber = new Subscriber();
    const offer = await controller.subscribe(room, `sub-${i}`, `pub-${i}`);
    await controller.answer(room, `sub-${i}`, await subscriber.answer(offer));
    await connected(subscriber.pc, 15000);
    pairs.push({ publisher, subscriber });
  }
}

export async function closePairs(source, pairs) {
  for (const { publisher, subscriber } of pairs) {
    source.publishers.delete(publisher);
    await Promise.all([publisher.close(), subscriber.close()]).catch(() => {});
  }
  pairs.length = 0;
}

/**
 * Join to first RTP: one publisher, `clients` subscribers joining one after the other; from the
 * first request of the subscriber's join (for the control plane: its register over /sync, with a
 * token minted before) to its first RTP packet.
 */
export async function joinPhase(controller, source, clients) {
  const room = `join-${controller.name}`;
  await controller.createRoom(room);
  const pairs = [];
  await addPairs(controller, room, source, pairs, 1);
  const extra = [];
  const latencies = [];
  for (let i = 0; i < clients; i++) {
    await controller.prepare?.(room, `join-${i}`);
    const subscriber = new Subscriber();
    extra.push(subscriber);
    const started = performance.now();
    const offer = await controller.subscribe(room, `join-${i}`, 'pub-0');
    await controller.answer(room, `join-${i}`, await subscriber.answer(offer));
    await until(() => subscriber.received.firstAt > 0, 10000, 'the first RTP packet');
    latencies.push(subscriber.received.firstAt - started);
  }
  await Promise.all(extra.map((s) => s.close()));
  await closePairs(source, pairs);
  await controller.destroyRoom(room);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: Math.max(...latencies) };
}

/** Silence at a receiver: no audio for this long after the command (10 packets). */
const QUIET_MS = 200;
/** A mute not silent by then did not reach Janus. */
const MUTE_DEADLINE_MS = 3000;

/**
 * Operator mute to silence: from sending the command to the last audio packet that still reaches
 * the receiver (0: none after the command; packets come every 20 ms), and the command's round trip.
 * A mute whose receiver still gets audio after MUTE_DEADLINE_MS is counted as not silenced.
 */
export async function moderatePhase(controller, room, pairs, mutes) {
  const silences = [];
  const roundTrips = [];
  let notSilenced = 0;
  for (let i = 0; i < mutes; i++) {
    const index = i % pairs.length;
    const { subscriber } = pairs[index];
    await until(() => performance.now() - subscriber.received.lastAudioAt < 40, 3000, 'audio flowing');
    // A random phase against the 20 ms packet clock.
    await sleep(Math.random() * 20);
    const asked = performance.now();
    await controller.mute(room, `pub-${index}`, true);
    roundTrips.push(performance.now() - asked);
    const silent = () => performance.now() - subscriber.received.lastAudioAt > QUIET_MS;
    const silenced = await until(silent, MUTE_DEADLINE_MS, 'silence').then(
      () => true,
      () => false,
    );
    if (silenced) silences.push(Math.max(0, subscriber.received.lastAudioAt - asked));
    else notSilenced++;
    const unmuted = performance.now();
    await controller.mute(room, `pub-${index}`, false);
    await until(() => subscriber.received.lastAudioAt > unmuted, 3000, 'audio back after unmute');
  }
  return {
    mutes,
    notSilenced,
    p50: percentile(silences, 50),
    p99: percentile(silences, 99),
    max: silences.length ? Math.max(...silences) : undefined,
    roundTripP50: percentile(roundTrips, 50),
    roundTripP99: percentile(roundTrips, 99),
  };
}

/** The processes each controller's path uses besides Janus (the direct script runs in the clients' process). */
const PATH_PROCESSES = {
  direct: [],
  agent: ['media-agent', 'nats-server'],
  'control-plane': [
    'media-agent',
    'runtime-registry',
    'admin-gateway',
    'nats-server',
    'redis-server',
    'postgres',
    'management-api',
  ],
};
/** The control plane proper, against Janus driven directly (the goal's ratio). */
const CORE = ['janus', 'media-agent', 'runtime-registry'];

/**
 * CPU per forwarded stream: every controller's room holds `--pairs` pairs; the RTP source feeds one
 * room at a time, in alternating slices (`--rounds`), so all see the same background load of the
 * shared machine. Janus counts in each room's own slices. The other processes carry no RTP: their
 * (steady) cost is taken over all slices and shared by the streams of the paths that use them.
 */
export async function cpuPhase(source, pids, rooms, opts, idle = {}) {
  const all = new Set(source.publishers);
  const totals = {};
  const overall = { seconds: 0 };
  const names = Object.keys(rooms);
  for (let round = 0; round < opts.rounds; round++) {
    for (const name of names) {
      source.publishers = new Set(rooms[name].pairs.map((p) => p.publisher));
      await sleep(500);
      const usage = cpuMeter(pids).usage;
      await sleep((opts.seconds * 1000) / opts.rounds);
      const { seconds, processes } = usage(1);
      totals[name] ??= { seconds: 0, janus: 0 };
      totals[name].seconds += seconds;
      totals[name].janus += processes.janus.cpu;
      overall.seconds += seconds;
      for (const [process, { cpu }] of Object.entries(processes)) overall[process] = (overall[process] ?? 0) + cpu;
    }
  }
  source.publishers = all;
  const streamsUsing = (process) => names.filter((name) => PATH_PROCESSES[name].includes(process)).length * opts.pairs;
  const result = {};
  for (const name of names) {
    const perStream = { janus: (totals[name].janus * 1e6) / totals[name].seconds / opts.pairs };
    // Without the fixed cost (the idle measure, no room): what one more stream adds.
    const added = { janus: perStream.janus };
    for (const process of PATH_PROCESSES[name]) {
      const cores = overall[process] / overall.seconds;
      perStream[process] = (cores * 1e6) / streamsUsing(process);
      added[process] = (Math.max(0, cores - (idle[process] ?? 0)) * 1e6) / streamsUsing(process);
    }
    const sum = (figures, processes) => processes.reduce((total, process) => total + (figures[process] ?? 0), 0);
    result[name] = {
      usPerStreamSecond: perStream,
      core: sum(perStream, CORE),
      all: sum(perStream, Object.keys(perStream)),
      coreAdded: sum(added, CORE),
    };
  }
  const baseline = result.direct?.usPerStreamSecond.janus;
  if (baseline)
    for (const name of names) {
      result[name].ratio = result[name].core / baseline;
      result[name].ratioAll = result[name].all / baseline;
      result[name].ratioAdded = result[name].coreAdded / baseline;
    }
  log(`cpu per forwarded stream: ${JSON.stringify(result)}`);
  return result;
}

/** Ramps pairs by `step` until loss or CPU saturates; the last step that held is the capacity. */
export async function capacityPhase(controller, source, pids, { step, maxPairs }) {
  const room = 'capacity';
  await controller.createRoom(room);
  const pairs = [];
  const steps = [];
  try {
    while (pairs.length + step <= maxPairs) {
      await addPairs(controller, room, source, pairs, step);
      await sleep(1000);
      const sentBefore = { ...source.sent };
      const receivedBefore = pairs.map((p) => ({ ...p.subscriber.received }));
      const ticks = systemTicks();
      const measuredFrom = performance.now();
      const meter = cpuMeter(pids);
      await sleep(5000);
      const cpu = meter.stop(1);
      const seconds = (performance.now() - measuredFrom) / 1000;
      const ticksAfter = systemTicks();
      const expected = (source.sent.audio - sentBefore.audio + source.sent.video - sentBefore.video) * pairs.length;
      const received = pairs.reduce(
        (sum, { subscriber }, i) =>
          sum +
          (subscriber.received.audio - receivedBefore[i].audio) +
          (subscriber.received.video - receivedBefore[i].video),
        0,
      );
      const figures = {
        pairs: pairs.length,
        loss: Math.max(0, 1 - received / expected),
        // The share of the nominal packet rate the source kept up (a starved event loop sends less).
        sourceRate: expected / pairs.length / seconds / (AUDIO_PER_SECOND + VIDEO_PER_SECOND),
        systemBusy: (ticksAfter.busy - ticks.busy) / (ticksAfter.total - ticks.total),
        cores: Object.fromEntries(Object.entries(cpu).map(([name, { cores }]) => [name, cores])),
      };
      steps.push(figures);
      log(`  capacity ${JSON.stringify(figures)}`);
      // The machine is shared: its busy share is reported, the stop is on loss and on our own processes.
      if (!held(figures)) break;
    }
  } catch (error) {
    log(`  capacity stopped: ${error.message}`);
  }
  await closePairs(source, pairs);
  await controller.destroyRoom(room).catch(() => {});
  return { pairs: steps.filter(held).at(-1)?.pairs ?? 0, limit: limitOf(steps.at(-1)), steps };
}

const held = (step) => step.loss <= 0.02 && step.cores.janus <= 1.6 && step.cores.clients <= 0.95;

function limitOf(last) {
  if (!last) return 'none';
  if (last.loss > 0.02) return `packet loss ${(last.loss * 100).toFixed(1)} %`;
  if (last.cores.clients > 0.95) return 'the werift clients (one Node process) saturated their core';
  if (last.cores.janus > 1.6) return 'Janus saturated the cores';
  return 'the --max-pairs cap';
}
