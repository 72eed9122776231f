// bench/admin: interface A snapshot throughput through gateway -> NATS -> registry -> Redis,
// against a bare Node HTTP server answering the same JSON, measured in the same run; then the
// same read with 100,000 live connections against 100; then register+join+connect through /sync.
//
//   node bench/admin/run.mjs [--duration 10] [--concurrency 32] [--connections 100000]
//        [--sync-clients 2000] [--sync-concurrency 200] [--rounds 8] [--sequential] [--cpu]
//        [--phases snapshot,big,sync[,echo,edge]] [--load-in-process]
//
// What runs (see bench/README.md): NATS, Redis, PostgreSQL, management-api, ONE runtime-registry
// and ONE admin-gateway, each a process of its own; the HTTP load generator and the bare baseline
// server are child processes of their own too; the /sync simulator runs in this process.
import { randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import { startBenchEnvironment } from '../lib/env.mjs';
import { addUsage, cpuMeter, formatCpu } from '../lib/cpu.mjs';
import {
  combine,
  formatResult,
  loadTest,
  loadTestInChild,
  startBareServer,
  startSyncEchoServer,
} from '../lib/load.mjs';
import { Simulation } from '../../tools/simulator/src/index.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const durationMs = arg('duration', 10) * 1000;
const concurrency = arg('concurrency', 32);
const bigConnections = arg('connections', 100000);
const syncClients = arg('sync-clients', 2000);
const syncConcurrency = arg('sync-concurrency', 200);
// The measured time of each HTTP target is split into rounds that alternate between the targets
// (bare, gateway with 100 connections, gateway with 100,000): every target sees the same background
// load of the machine, so the ratios hold even when other work comes and goes.
const rounds = Math.max(1, arg('rounds', 8));
// --sequential: each simulated client waits for every answer before its next request (default:
// it pipelines register, join, connection.open and its states, as the protocol allows).
const pipeline = !process.argv.includes('--sequential');
// --phases snapshot,big,sync (default) runs a subset; `echo` (the simulator against a trivial /sync
// server) and `edge` (the registry alone, fed its reports directly) are profiling aids.
const phasesArg = process.argv.indexOf('--phases');
const phases = new Set(phasesArg > 0 ? process.argv[phasesArg + 1].split(',') : ['snapshot', 'big', 'sync']);
// --registry-replicas <n>: runtime-registry processes (default 1; they share the work through the
// queue group, as in a deployment).
const registryReplicas = Math.max(1, arg('registry-replicas', 1));
// --load-in-process: the HTTP load generator runs inside this process (default: a child process).
const loadFn = process.argv.includes('--load-in-process') ? loadTest : loadTestInChild;
// --cpu: CPU time and system calls of every process per request / per client, and other details.
const showCpu = process.argv.includes('--cpu');

const env = await startBenchEnvironment();
const results = {};
try {
  const { apiKey, organizationId } = await env.bootstrap();
  await env.startService('management-api');
  for (let i = 0; i < registryReplicas; i++)
    await env.startService(
      'runtime-registry',
      process.env.BENCH_REGISTRY_LOG_LEVEL ? { LOG_LEVEL: process.env.BENCH_REGISTRY_LOG_LEVEL } : {},
    );
  const gateway = await env.startService('admin-gateway', { API_KEY_CACHE_TTL_MS: '60000' });
  const nc = await connect({ servers: env.env.NATS_URL });
  const ns = env.env.NATS_NAMESPACE;

  // Live state straight through the registry's edge subject (what the gateway does per frame).
  const edge = async (report) => {
    const msg = await nc.request(
      `${ns}.runtime-registry.v1.edge`,
      JSON.stringify({ pattern: 'runtime-registry.v1.edge', id: randomUUID(), data: { report } }),
      { timeout: 30000 },
    );
    const reply = JSON.parse(new TextDecoder().decode(msg.data));
    if (reply.err) throw new Error(`edge ${report.kind}: ${JSON.stringify(reply.err)}`);
  };
  const populate = async (applicationId, connections, perClient = 1) => {
    const clients = Math.ceil(connections / perClient);
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        for (let i = next++; i < clients; i = next++) {
          const client = { applicationId, userId: `u${i % 5000}`, deviceId: `d${i}`, clientId: `c${i}` };
          const channelId = `ch${i % 500}`;
          await edge({
            kind: 'client.register',
            client: { ...client, userAlias: null, deviceAlias: null, tag: null, roles: [], protocol: 'bench' },
            organizationId,
            gatewayId: 'bench',
            claims: [{ id: channelId }],
          });
          await edge({ kind: 'client.join', client, channelId, claim: { id: channelId } });
          for (let k = 0; k < perClient && i * perClient + k < connections; k++) {
            await edge({
              kind: 'connection.open',
              client,
              channelId,
              connectionId: `cn${i}-${k}`,
              type: 'peer',
              tag: null,
              streams: { audio: { direction: 'sendrecv' } },
            });
          }
        }
      }),
    );
  };

  const headers = { 'x-api-key': apiKey };
  const snapshotUrl = (a) => `${gateway.url}/admin/api/v1.0/applications/${a}`;

  if (phases.has('snapshot') || phases.has('big')) {
    const targets = [];
    const small = `bench-small-${Date.now()}`;
    await populate(small, 100);
    const body = await (await fetch(snapshotUrl(small), { headers })).text();
    console.log(`snapshot of ${small}: ${body}`);
    // Baseline: a bare Node HTTP server answering the same JSON, in a process of its own.
    const bare = phases.has('snapshot') ? await startBareServer(body) : null;
    // The same gateway without sharing identical reads of a turn (ADMIN_SHARE_READS=false), a
    // process of its own: what every request costs when each is one registry read.
    const unshared = bare
      ? await env.startService('admin-gateway', { API_KEY_CACHE_TTL_MS: '60000', ADMIN_SHARE_READS: 'false' })
      : null;
    const unsharedName = unshared && Object.keys(env.pids).find((name) => env.pids[name] === unshared.pid);
    if (bare) {
      targets.push({
        key: 'bare',
        name: 'bare Node HTTP (same JSON)',
        url: `${bare.url}/admin/api/v1.0/applications/${small}`,
        pids: { 'bare server': bare.pid },
      });
      targets.push({
        key: 'gateway100',
        name: 'gateway snapshot, 100 connections',
        url: snapshotUrl(small),
        headers,
        gateway,
      });
      targets.push({
        key: 'unshared100',
        name: 'same, ADMIN_SHARE_READS=false',
        url: `${unshared.url}/admin/api/v1.0/applications/${small}`,
        headers,
        gateway: unshared,
      });
    }
    if (phases.has('big')) {
      const big = `bench-big-${Date.now()}`;
      const populateStarted = Date.now();
      await populate(big, bigConnections, 4);
      console.log(`populated ${bigConnections} connections in ${((Date.now() - populateStarted) / 1000).toFixed(1)} s`);
      console.log(`snapshot of ${big}: ${await (await fetch(snapshotUrl(big), { headers })).text()}`);
      if (!bare)
        targets.push({
          key: 'gateway100',
          name: 'gateway snapshot, 100 connections',
          url: snapshotUrl(small),
          headers,
          gateway,
        });
      targets.push({
        key: 'gatewayBig',
        name: `gateway snapshot, ${bigConnections} connections`,
        url: snapshotUrl(big),
        headers,
        gateway,
      });
    }
    // Reads the gateway answered from an identical read of the same event-loop turn (its /metrics).
    const sharedReads = async (g) => {
      const text = await (await fetch(`${g.url}/metrics`)).text();
      return Number(
        /^nats_requests_shared_total\{[^}]*subject="runtime-registry\.v1\.query"[^}]*\} (\S+)$/m.exec(text)?.[1] ?? 0,
      );
    };
    const runs = Object.fromEntries(targets.map((t) => [t.key, { target: t, results: [], usage: null, shared: 0 }]));
    for (let round = 0; round < rounds; round++) {
      for (const t of targets) {
        let meter;
        let usage;
        let sharedAtStart = Promise.resolve(0);
        let sharedAtEnd = Promise.resolve(0);
        const r = await loadFn(
          {
            url: t.url,
            headers: t.headers ?? {},
            concurrency,
            durationMs: durationMs / rounds,
            warmupMs: round === 0 ? 2000 : 500,
            keepLatencies: true,
          },
          {
            measuring: (pid) => {
              // Each gateway's CPU only while it is the target.
              const pids = Object.fromEntries(
                Object.entries(env.pids).filter(
                  ([name, p]) => !name.startsWith('admin-gateway') || p === t.gateway?.pid,
                ),
              );
              meter = cpuMeter({ ...pids, ...t.pids, 'load generator': pid });
              if (t.gateway) sharedAtStart = sharedReads(t.gateway);
            },
            measured: (requests) => {
              usage = meter?.usage(requests);
              if (t.gateway) sharedAtEnd = sharedReads(t.gateway);
            },
          },
        );
        if (t.gateway) runs[t.key].shared += (await sharedAtEnd) - (await sharedAtStart);
        runs[t.key].results.push(r);
        runs[t.key].usage = addUsage(runs[t.key].usage, usage);
      }
    }
    await bare?.stop();
    if (unshared) {
      process.kill(unshared.pid, 'SIGTERM');
      delete env.pids[unsharedName];
    }
    for (const { target, results: rs, usage, shared } of Object.values(runs)) {
      results[target.key] = combine(rs);
      console.log(formatResult(target.name, results[target.key]));
      if (target.gateway) {
        const requests = rs.reduce((n, r) => n + r.requests, 0);
        console.log(
          `  registry reads: ${shared} requests answered by an identical read of the same turn (shareWithinTurn), ${((100 * shared) / requests).toFixed(0)}% of ${requests}`,
        );
      }
      if (showCpu && usage) console.log(`  cpu per request: ${formatCpu(usage)}`);
    }
  }

  // register + join + connect through the real /sync socket: tokens are minted first (not timed),
  // CPU is metered over the connect phase only.
  const simulate = async (label, options, pids) => {
    let meter;
    const simulation = new Simulation({
      clients: syncClients,
      channels: 50,
      connectionType: 'sfu',
      concurrency: syncConcurrency,
      pipeline,
      ...options,
      log: (e) => {
        if (e.event === 'tokens') meter = cpuMeter({ ...pids, 'bench (simulator)': process.pid });
      },
    });
    let report;
    try {
      await simulation.start();
      const usage = meter.usage(simulation.clients.filter((c) => c.state === 'connected').length);
      report = simulation.report();
      report.usage = usage;
    } finally {
      await simulation.stop();
    }
    const c = report.connect;
    console.log(
      `${label}: ${report.clients.connected} clients in ${(c.connectMs / 1000).toFixed(1)} s, ${c.clientsPerSecond.toFixed(0)} clients/s, ${report.clients.failed} failed (tokens minted before: ${(c.tokensMs / 1000).toFixed(1)} s)`,
    );
    if (showCpu) {
      console.log(`  cpu per connected client: ${formatCpu(report.usage)}`);
      for (const [op, o] of Object.entries(report.operations))
        console.log(
          `  ${op.padEnd(18)} ${String(o.count).padStart(6)}  p50 ${o.latencyMs?.p50} ms  p99 ${o.latencyMs?.p99} ms`,
        );
    }
    if (report.errors.total)
      console.log(
        `  errors: ${JSON.stringify(report.errors.byCode)} ${JSON.stringify(report.errors.samples.slice(0, 3))}`,
      );
    return report;
  };

  if (phases.has('edge')) {
    // The reports of register + join + connect (peer connections: no placement) straight to the
    // registry's edge subject, without the gateway: the registry's cost per client. First one
    // request per report, then each client's reports as one sequence of an edge batch (as the
    // gateway sends pipelined requests), `batchClients` clients per batch request.
    const reportsOf = (a, i) => {
      const client = { applicationId: a, userId: `u${i}`, deviceId: `d${i}`, clientId: `c${i}` };
      const channelId = `ch${i % 50}`;
      const ref = { client, channelId, connectionId: `cn${i}` };
      return [
        {
          kind: 'client.register',
          client: {
            ...client,
            userAlias: 'U',
            deviceAlias: 'D',
            tag: 'sim',
            roles: ['simulated'],
            protocol: 'websocket',
          },
          organizationId,
          gatewayId: 'bench',
          claims: [{ id: channelId }],
        },
        { kind: 'client.join', client, channelId, claim: { id: channelId } },
        {
          kind: 'connection.open',
          ...ref,
          type: 'peer',
          tag: 'sim',
          streams: {
            audio: { direction: 'sendrecv', formats: ['opus/48000/2'] },
            video: { direction: 'sendrecv', formats: ['VP8/90000'] },
            data: null,
          },
        },
        ...['initializing', 'connecting', 'connected'].map((state) => ({
          kind: 'connection.state',
          ...ref,
          state,
          error: null,
        })),
      ];
    };
    const batchClients = 8;
    const n = syncClients;
    for (const batched of [false, true]) {
      const a = `bench-edge-${batched ? 'batched' : 'single'}-${Date.now()}`;
      const meter = cpuMeter(
        Object.fromEntries(
          Object.entries(env.pids).filter(([name]) => /^(runtime-registry|redis-server|nats-server)/.test(name)),
        ),
      );
      const started = performance.now();
      let next = 0;
      const step = batched ? batchClients : 1;
      await Promise.all(
        Array.from({ length: Math.ceil(syncConcurrency / step) }, async () => {
          for (let i = (next += step) - step; i < n; i = (next += step) - step) {
            if (!batched) {
              for (const report of reportsOf(a, i)) await edge(report);
              continue;
            }
            const sequences = [];
            for (let k = i; k < Math.min(n, i + step); k++) sequences.push(reportsOf(a, k));
            const msg = await nc.request(
              `${ns}.runtime-registry.v1.edge`,
              JSON.stringify({
                pattern: 'runtime-registry.v1.edge',
                id: randomUUID(),
                data: { report: { kind: 'batch', sequences } },
              }),
              { timeout: 30000 },
            );
            const failed = JSON.parse(new TextDecoder().decode(msg.data))
              .response?.sequences?.flat()
              .find((o) => !('ok' in o));
            if (failed) throw new Error(`edge batch: ${JSON.stringify(failed)}`);
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      console.log(
        `edge reports of ${n} clients straight to the registry, ${batched ? `one batch request per ${batchClients} clients` : 'one request per report'}: ${(n / seconds).toFixed(0)} clients/s`,
      );
      console.log(`  cpu per client: ${formatCpu(meter.usage(n))}`);
    }
  }

  if (phases.has('echo')) {
    // The simulator against a trivial /sync server: its own capacity, which must be well above the goal.
    const echo = await startSyncEchoServer();
    const report = await simulate(
      'simulator against a trivial /sync echo server',
      { gatewayUrl: echo.url.replace('http', 'ws'), sharedSecret: 'echo', applicationId: 'echo' },
      { 'echo server': echo.pid },
    );
    results.echo = { clientsPerSecond: report.connect.clientsPerSecond };
    await echo.stop();
  }

  if (phases.has('sync')) {
    const report = await simulate(
      'register+join+connect through /sync',
      {
        gatewayUrl: gateway.url.replace('http', 'ws'),
        managementUrl: env.services['management-api'],
        apiKey,
        natsUrl: env.env.NATS_URL,
        namespace: ns,
        mediaServers: 2,
        mediaServerCapacity: syncClients,
      },
      env.pids,
    );
    if (showCpu) {
      // Mean duration of the gateway's NATS requests per subject during the whole run (its /metrics).
      const text = await (await fetch(`${gateway.url}/metrics`)).text();
      const sums = {};
      for (const m of text.matchAll(/^nats_request_duration_seconds_(sum|count)\{([^}]*)\} (\S+)$/gm)) {
        const subject = /subject="([^"]+)"/.exec(m[2])?.[1];
        (sums[subject] ??= {})[m[1]] = Number(m[3]);
      }
      for (const [subject, v] of Object.entries(sums))
        console.log(`  gateway -> ${subject}: ${v.count} requests, mean ${((v.sum / v.count) * 1000).toFixed(2)} ms`);
      // Time Redis itself spent per script run (INFO commandstats), over the whole run.
      const redis = new Redis(env.env.REDIS_URL);
      const stats = await redis.info('commandstats');
      await redis.quit();
      const evalsha = /^cmdstat_evalsha:calls=(\d+),usec=\d+,usec_per_call=([\d.]+)/m.exec(stats);
      if (evalsha) console.log(`  redis: ${evalsha[1]} script runs, ${evalsha[2]} µs each`);
    }
    results.sync = {
      clients: report.clients.connected,
      failed: report.clients.failed,
      clientsPerSecond: report.connect.clientsPerSecond,
    };
  }

  console.log('\nratios');
  if (results.gateway100 && results.bare)
    console.log(
      `  gateway / bare (100 connections):      ${(results.gateway100.rps / results.bare.rps).toFixed(2)}  (goal >= 0.5)`,
    );
  if (results.unshared100 && results.bare)
    console.log(`  same, ADMIN_SHARE_READS=false / bare:  ${(results.unshared100.rps / results.bare.rps).toFixed(2)}`);
  if (results.gatewayBig && results.gateway100)
    console.log(
      `  ${bigConnections} / 100 connections (gateway): ${(results.gatewayBig.rps / results.gateway100.rps).toFixed(2)}  (goal >= 0.9)`,
    );
  if (results.sync)
    console.log(`  /sync register+join+connect: ${results.sync.clientsPerSecond.toFixed(0)} clients/s (goal >= 1000)`);
  if (results.echo)
    console.log(`  simulator alone (echo server): ${results.echo.clientsPerSecond.toFixed(0)} clients/s`);
  await nc.close();
} finally {
  await env.stop();
}
