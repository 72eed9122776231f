// bench/media: the media plane with real Janus and werift clients, inside a private network
// namespace made by the run (tools/testing/media-netns.mjs; Janus gathers no candidates on loopback).
// Janus driven through the whole control plane (/sync, admin-gateway, runtime-registry,
// media-agent), through the media-agent alone (over NATS), and directly by a minimal janode script,
// in the same run. See bench/media/README.md.
//
//   node bench/media/run.mjs [--clients 20] [--pairs 10] [--seconds 20] [--rounds 5] [--mutes 30]
//                            [--step 10] [--max-pairs 200] [--phases join,cpu,moderate,capacity]
//                            [--controllers direct,agent,control-plane] [--json]
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMeter } from '../lib/cpu.mjs';
import { freePort, startBenchEnvironment } from '../lib/env.mjs';
import { startJanus, stopJanus } from '../../tools/stack/janus.mjs';
import { MEDIA_ADDRESS } from '../../tools/testing/media-netns.mjs';
import { RtpSource } from './clients.mjs';
import { controlPlaneController, startControlPlane } from './control-plane.mjs';
import { agentController, directController } from './controllers.mjs';
import { addPairs, capacityPhase, closePairs, cpuPhase, joinPhase, log, moderatePhase, sleep } from './phases.mjs';
import { printTable } from './report.mjs';

const CONTROLLERS = ['direct', 'agent', 'control-plane'];

function options() {
  const value = (name, fallback) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : fallback;
  };
  const controllers = value('controllers', CONTROLLERS.join(',')).split(',');
  const unknown = controllers.filter((name) => !CONTROLLERS.includes(name));
  if (unknown.length) throw new Error(`unknown controllers ${unknown.join(', ')} (known: ${CONTROLLERS.join(', ')})`);
  return {
    clients: Number(value('clients', 20)),
    pairs: Number(value('pairs', 10)),
    seconds: Number(value('seconds', 20)),
    rounds: Number(value('rounds', 5)),
    mutes: Number(value('mutes', 30)),
    step: Number(value('step', 10)),
    maxPairs: Number(value('max-pairs', 200)),
    phases: value('phases', 'join,cpu,moderate,capacity').split(','),
    controllers,
    json: process.argv.includes('--json'),
  };
}

/** A process and its children (PostgreSQL's backends), whose CPU counts as one (cpu.mjs). */
function processTree(pid) {
  const children = fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [pid, ...children];
}

/** Janus, its media-agent, and the control plane when it is measured; the controllers asked for. */
async function startPlane(env, opts) {
  const janusSettings = {
    dataDir: path.join(env.dir, 'janus'),
    wsPort: await freePort(),
    adminPort: await freePort(),
    adminSecret: randomBytes(12).toString('hex'),
    roomAdminKey: randomBytes(12).toString('hex'),
  };
  const janus = await startJanus(janusSettings);
  const mediaServerId = randomUUID();
  const controllers = [];
  try {
    await env.startService('media-agent', {
      JANUS_URL: janus.wsUrl,
      JANUS_ADMIN_URL: janus.adminUrl,
      JANUS_ADMIN_SECRET: janusSettings.adminSecret,
      JANUS_ROOM_ADMIN_KEY: janusSettings.roomAdminKey,
      MEDIA_SERVER_ID: mediaServerId,
      MEDIA_SERVER_ADDRESSES: `udp://${MEDIA_ADDRESS}:40000-40999`,
    });
    if (opts.controllers.includes('direct'))
      controllers.push(await directController({ janusUrl: janus.wsUrl, roomAdminKey: janusSettings.roomAdminKey }));
    if (opts.controllers.includes('agent'))
      controllers.push(
        await agentController({ natsUrl: env.env.NATS_URL, namespace: env.env.NATS_NAMESPACE, mediaServerId }),
      );
    if (opts.controllers.includes('control-plane')) {
      // The registry's reconciliation removes Janus rooms it holds no connection of: the agent's rooms.
      const registryEnv = opts.controllers.includes('agent') ? { MEDIA_RECONCILE_INTERVAL_MS: '3600000' } : {};
      controllers.push(controlPlaneController(await startControlPlane(env, mediaServerId, registryEnv)));
    }
  } catch (error) {
    await Promise.all(controllers.map((controller) => controller.close().catch(() => {})));
    await stopJanus(janus.pid).catch(() => {});
    throw error;
  }
  const { postgres, ...servers } = env.pids;
  const pids = { janus: janus.pid, ...servers, clients: process.pid };
  if (postgres) pids.postgres = () => processTree(postgres);
  return { janus, controllers, pids };
}

async function main() {
  const opts = options();
  const controlPlane = opts.controllers.includes('control-plane');
  const env = await startBenchEnvironment({ postgres: controlPlane, redis: controlPlane });
  const source = new RtpSource();
  const results = { date: new Date().toISOString(), options: opts };
  let plane;
  try {
    plane = await startPlane(env, opts);
    const { controllers, pids } = plane;
    source.start();
    if (opts.phases.includes('cpu')) {
      // The fixed cost of every process with no room at all (heartbeats, statistics turns, pings).
      const meter = cpuMeter(pids);
      await sleep(10000);
      results.idle = Object.fromEntries(Object.entries(meter.stop(1)).map(([name, { cores }]) => [name, cores]));
      log(`idle cores: ${JSON.stringify(results.idle)}`);
    }
    if (opts.phases.includes('join')) {
      results.join = {};
      for (const controller of controllers) {
        results.join[controller.name] = await joinPhase(controller, source, opts.clients);
        log(`join to first RTP, ${controller.name}: ${JSON.stringify(results.join[controller.name])}`);
      }
    }
    if (opts.phases.includes('cpu') || opts.phases.includes('moderate')) {
      const rooms = {};
      for (const controller of controllers) {
        rooms[controller.name] = { controller, room: `cpu-${controller.name}`, pairs: [] };
        await controller.createRoom(rooms[controller.name].room);
        await addPairs(controller, rooms[controller.name].room, source, rooms[controller.name].pairs, opts.pairs);
      }
      await sleep(2000);
      if (opts.phases.includes('cpu')) results.cpu = await cpuPhase(source, pids, rooms, opts, results.idle);
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
      // Through the whole control plane when it is measured, else through the agent or directly.
      const controller = controllers.at(-1);
      results.capacity = { controller: controller.name, ...(await capacityPhase(controller, source, pids, opts)) };
    }
  } finally {
    source.stop();
    for (const controller of plane?.controllers ?? []) await controller.close().catch(() => {});
    if (plane) await stopJanus(plane.janus.pid).catch(() => {});
    await env.stop();
  }
  if (opts.json) process.stdout.write(`${JSON.stringify(results)}\n`);
  else printTable(results);
  process.exit(0);
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
