// bench/media: the media plane with real Janus and werift clients, inside a private network
// namespace made by the run (tools/testing/media-netns.mjs; Janus gathers no candidates on loopback).
// Janus + media-agent (over NATS) against Janus driven directly by a minimal janode script, in the
// same run. See bench/media/README.md.
//
//   node bench/media/run.mjs [--clients 20] [--pairs 10] [--seconds 20] [--rounds 5] [--mutes 30]
//                            [--step 10] [--max-pairs 200] [--phases join,cpu,moderate,capacity] [--json]
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMeter } from '../lib/cpu.mjs';
import { freePort, startBenchEnvironment } from '../lib/env.mjs';
import { startJanus, stopJanus } from '../../tools/stack/janus.mjs';
import { AUDIO_PER_SECOND, connected, Publisher, RtpSource, Subscriber, VIDEO_PER_SECOND } from './clients.mjs';
import { agentController, directController } from './controllers.mjs';

function options() {
  const value = (name, fallback) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : fallback;
  };
  return {
    clients: Number(value('clients', 20)),
    pairs: Number(value('pairs', 10)),
    seconds: Number(value('seconds', 20)),
    rounds: Number(value('rounds', 5)),
    mutes: Number(value('mutes', 30)),
    step: Number(value('step', 10)),
    maxPairs: Number(value('max-pairs', 200)),
    phases: value('phases', 'join,cpu,moderate,capacity').split(','),
    json: process.argv.includes('--json'),
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line) => process.stderr.write(`${line}\n`);

function percentile(values, p) {
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
async function addPairs(controller, room, source, pairs, count) {
  const start = pairs.length;
  for (let i = start; i < start + count; i++) {
    const publisher = new Publisher();
    const answer = await controller.publish(room, `pub-${i}`, await publisher.offer());
    await publisher.pc.setRemoteDescription(answer);
    await connected(publisher.pc);
    source.publishers.add(publisher);
    const subscriber = new Subscriber();
    const offer = await controller.subscribe(room, `sub-${i}`, `pub-${i}`);
    await controller.answer(room, `sub-${i}`, await subscriber.answer(offer));
    await connected(subscriber.pc);
    pairs.push({ publisher, subscriber });
  }
}

async function closePairs(source, pairs) {
  for (const { publisher, subscriber } of pairs) {
    source.publishers.delete(publisher);
    await Promise.all([publisher.close(), subscriber.close()]).catch(() => {});
  }
  pairs.length = 0;
}

/** Join to first RTP: one publisher, `clients` subscribers joining one after the other. */
async function joinPhase(controller, source, clients) {
  const room = `join-${controller.name}`;
  await controller.createRoom(room);
  const pairs = [];
  await addPairs(controller, room, source, pairs, 1);
  const extra = [];
  const latencies = [];
  for (let i = 0; i < clients; i++) {
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

/** CPU of the processes while `pairs` pairs flow for `seconds`. */
async function measureCpu(pids, seconds) {
  const meter = cpuMeter(pids);
  await sleep(seconds * 1000);
  return meter.stop(1);
}

/**
 * Operator mute to silence: from sending the command to the last audio packet that still reaches
 * the receiver (0: none after the command; packets come every 20 ms), and the command's round trip.
 */
async function moderatePhase(controller, room, pairs, mutes) {
  const silences = [];
  const roundTrips = [];
  for (let i = 0; i < mutes; i++) {
    const index = i % pairs.length;
    const { subscriber } = pairs[index];
    await until(() => performance.now() - subscriber.received.lastAudioAt < 40, 3000, 'audio flowing');
    // A random phase against the 20 ms packet clock.
    await sleep(Math.random() * 20);
    const asked = performance.now();
    await controller.mute(room, `pub-${index}`, true);
    roundTrips.push(performance.now() - asked);
    await sleep(600);
    silences.push(Math.max(0, subscriber.received.lastAudioAt - asked));
    const unmuted = performance.now();
    await controller.mute(room, `pub-${index}`, false);
    await until(() => subscriber.received.lastAudioAt > unmuted, 3000, 'audio back after unmute');
  }
  return {
    p50: percentile(silences, 50),
    p99: percentile(silences, 99),
    max: Math.max(...silences),
    roundTripP50: percentile(roundTrips, 50),
    roundTripP99: percentile(roundTrips, 99),
  };
}

/**
 * CPU per forwarded stream: both rooms hold `--pairs` pairs; the RTP source feeds one room at a
 * time, in alternating slices (`--rounds`), so both see the same background load of the shared
 * machine. The agent's CPU counts in its own slices only; Janus's in each mode's slices.
 */
async function cpuPhase(source, pids, rooms, opts) {
  const all = new Set(source.publishers);
  const totals = { direct: {}, agent: {} };
  for (let round = 0; round < opts.rounds; round++) {
    for (const name of ['direct', 'agent']) {
      source.publishers = new Set(rooms[name].pairs.map((p) => p.publisher));
      await sleep(500);
      const usage = cpuMeter(pids).usage;
      await sleep((opts.seconds * 1000) / opts.rounds);
      const { seconds, processes } = usage(1);
      for (const [process, { cpu }] of Object.entries(processes))
        totals[name][process] = (totals[name][process] ?? 0) + cpu;
      totals[name].seconds = (totals[name].seconds ?? 0) + seconds;
    }
  }
  source.publishers = all;
  const perStream = (mode, process) => (totals[mode][process] * 1e6) / totals[mode].seconds / opts.pairs;
  const result = {};
  for (const mode of ['direct', 'agent'])
    result[mode] = {
      janusUsPerStreamSecond: perStream(mode, 'janus'),
      agentUsPerStreamSecond: perStream(mode, 'media-agent'),
      natsUsPerStreamSecond: perStream(mode, 'nats-server'),
    };
  const { agent: a, direct: d } = result;
  result.ratio = (a.janusUsPerStreamSecond + a.agentUsPerStreamSecond) / d.janusUsPerStreamSecond;
  result.ratioWithNats =
    (a.janusUsPerStreamSecond + a.agentUsPerStreamSecond + a.natsUsPerStreamSecond) / d.janusUsPerStreamSecond;
  log(`cpu per forwarded stream: ${JSON.stringify(result)}`);
  return result;
}

/** Ramps pairs by `step` until loss or CPU saturates; the last step that held is the capacity. */
async function capacityPhase(controller, source, pids, { step, maxPairs }) {
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
      const cpu = await measureCpu(pids, 5);
      const seconds = (performance.now() - measuredFrom) / 1000;
      const ticksAfter = systemTicks();
      const expected = (source.sent.audio - sentBefore.audio + source.sent.video - sentBefore.video) * pairs.length;
      const received = pairs.reduce(
        (sum, p, i) =>
          sum +
          p.subscriber.received.audio -
          receivedBefore[i].audio +
          p.subscriber.received.video -
          receivedBefore[i].video,
        0,
      );
      const figures = {
        pairs: pairs.length,
        loss: Math.max(0, 1 - received / expected),
        // The share of the nominal packet rate the source kept up (a starved event loop sends less).
        sourceRate: expected / pairs.length / seconds / (AUDIO_PER_SECOND + VIDEO_PER_SECOND),
        systemBusy: (ticksAfter.busy - ticks.busy) / (ticksAfter.total - ticks.total),
        janusCores: cpu.janus.cores,
        agentCores: cpu['media-agent'].cores,
        clientsCores: cpu.clients.cores,
      };
      steps.push(figures);
      log(`  capacity ${JSON.stringify(figures)}`);
      // The machine is shared: its busy share is reported, the stop is on loss and on our own processes.
      if (figures.loss > 0.02 || figures.janusCores > 1.6 || figures.clientsCores > 0.95) break;
    }
  } catch (error) {
    log(`  capacity stopped: ${error.message}`);
  }
  await closePairs(source, pairs);
  await controller.destroyRoom(room).catch(() => {});
  return steps;
}

async function main() {
  const opts = options();
  const env = await startBenchEnvironment({ postgres: false, redis: false });
  const janusSettings = {
    dataDir: path.join(env.dir, 'janus'),
    wsPort: await freePort(),
    adminPort: await freePort(),
    adminSecret: randomBytes(12).toString('hex'),
    roomAdminKey: randomBytes(12).toString('hex'),
  };
  const janus = await startJanus(janusSettings);
  const mediaServerId = randomUUID();
  const source = new RtpSource();
  const results = { date: new Date().toISOString(), options: opts };
  let agent;
  let direct;
  try {
    const service = await env.startService('media-agent', {
      JANUS_URL: janus.wsUrl,
      JANUS_ADMIN_URL: janus.adminUrl,
      JANUS_ADMIN_SECRET: janusSettings.adminSecret,
      JANUS_ROOM_ADMIN_KEY: janusSettings.roomAdminKey,
      MEDIA_SERVER_ID: mediaServerId,
    });
    const pids = {
      janus: janus.pid,
      'media-agent': service.pid,
      'nats-server': env.pids['nats-server'],
      clients: process.pid,
    };
    agent = await agentController({ natsUrl: env.env.NATS_URL, namespace: env.env.NATS_NAMESPACE, mediaServerId });
    direct = await directController({ janusUrl: janus.wsUrl, roomAdminKey: janusSettings.roomAdminKey });
    source.start();
    if (opts.phases.includes('join')) {
      results.join = {};
      for (const controller of [direct, agent]) {
        results.join[controller.name] = await joinPhase(controller, source, opts.clients);
        log(`join to first RTP, ${controller.name}: ${JSON.stringify(results.join[controller.name])}`);
      }
    }
    if (opts.phases.includes('cpu') || opts.phases.includes('moderate')) {
      const rooms = {};
      for (const controller of [direct, agent]) {
        rooms[controller.name] = { controller, room: `cpu-${controller.name}`, pairs: [] };
        await controller.createRoom(rooms[controller.name].room);
        await addPairs(controller, rooms[controller.name].room, source, rooms[controller.name].pairs, opts.pairs);
      }
      await sleep(2000);
      if (opts.phases.includes('cpu')) results.cpu = await cpuPhase(source, pids, rooms, opts);
      if (opts.phases.includes('moderate')) {
        results.moderate = {};
        for (const { controller, room, pairs } of Object.values(rooms)) {
          results.moderate[controller.name] = await moderatePhase(controller, room, pairs, opts.mutes);
          log(`mute to silence, ${controller.name}: ${JSON.stringify(results.moderate[controller.name])}`);
        }
      }
      for (const { controller, room, pairs } of Object.values(rooms)) {
        await closePairs(source, pairs);
        await controller.destroyRoom(room);
      }
    }
    if (opts.phases.includes('capacity')) {
      const steps = await capacityPhase(agent, source, pids, opts);
      const held = steps.filter((s) => s.loss <= 0.02 && s.janusCores <= 1.6 && s.clientsCores <= 0.95);
      results.capacity = { pairs: held.at(-1)?.pairs ?? 0, limit: limitOf(steps.at(-1)), steps };
    }
  } finally {
    source.stop();
    await agent?.close().catch(() => {});
    await direct?.close().catch(() => {});
    await stopJanus(janus.pid).catch(() => {});
    await env.stop();
  }
  if (opts.json) process.stdout.write(`${JSON.stringify(results)}\n`);
  else printTable(results);
  process.exit(0);
}

function limitOf(last) {
  if (!last) return 'none';
  if (last.loss > 0.02) return `packet loss ${(last.loss * 100).toFixed(1)} %`;
  if (last.clientsCores > 0.95) return 'the werift clients (one Node process) saturated their core';
  if (last.janusCores > 1.6) return 'Janus saturated the cores';
  return 'the --max-pairs cap';
}

function printTable(results) {
  const ms = (v) => (v === undefined ? '-' : `${v.toFixed(0)} ms`);
  const lines = ['| measure | direct janode | media-agent | goal |', '|---|---|---|---|'];
  const { join, cpu, moderate, capacity } = results;
  if (join)
    lines.push(
      `| join to first RTP p50 / p99 | ${ms(join.direct.p50)} / ${ms(join.direct.p99)} | ${ms(join.agent.p50)} / ${ms(join.agent.p99)} | |`,
    );
  if (cpu?.ratio !== undefined)
    lines.push(
      `| CPU per forwarded stream (µs/s) | Janus ${cpu.direct.janusUsPerStreamSecond.toFixed(0)} | Janus ${cpu.agent.janusUsPerStreamSecond.toFixed(0)} + agent ${cpu.agent.agentUsPerStreamSecond.toFixed(0)} (+ NATS ${cpu.agent.natsUsPerStreamSecond.toFixed(0)}): **${cpu.ratio.toFixed(2)}x** (${cpu.ratioWithNats.toFixed(2)}x) | ≤ 1.3x |`,
    );
  if (moderate)
    lines.push(
      `| mute: last packet after the command p50 / p99 (command round trip p50 / p99) | ${ms(moderate.direct?.p50)} / ${ms(moderate.direct?.p99)} (${ms(moderate.direct?.roundTripP50)} / ${ms(moderate.direct?.roundTripP99)}) | ${ms(moderate.agent.p50)} / ${ms(moderate.agent.p99)} (${ms(moderate.agent.roundTripP50)} / ${ms(moderate.agent.roundTripP99)}) | < 500 ms |`,
    );
  if (capacity) lines.push(`| pairs held (agent) | | ${capacity.pairs} (stopped by: ${capacity.limit}) | |`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

const INSIDE = 'BENCH_MEDIA_NETNS';
if (process.env[INSIDE] !== '1') {
  // Re-runs this module in a network namespace of its own, with the same Node and arguments.
  const netns = fileURLToPath(new URL('../../tools/testing/media-netns.mjs', import.meta.url));
  const args = [netns, process.execPath, fileURLToPath(import.meta.url), ...process.argv.slice(2)];
  const child = spawn(process.execPath, args, { stdio: 'inherit', env: { ...process.env, [INSIDE]: '1' } });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 143 : 1)));
} else {
  await main();
}
