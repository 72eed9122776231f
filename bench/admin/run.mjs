// bench/admin: interface A snapshot throughput through gateway -> NATS -> registry -> Redis,
// against a bare Node HTTP server answering the same JSON, measured in the same run; then the
// same read with 100,000 live connections against 100; then register+join+connect through /sync.
//
//   npm run build && node bench/admin/run.mjs [--duration 10] [--concurrency 32] [--connections 100000]
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { startBenchEnvironment } from '../lib/env.mjs';
import { formatResult, loadTest } from '../lib/load.mjs';
import { runSimulation } from '../../tools/simulator/src/index.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const durationMs = arg('duration', 10) * 1000;
const concurrency = arg('concurrency', 32);
const bigConnections = arg('connections', 100000);
const syncClients = arg('sync-clients', 2000);

const env = await startBenchEnvironment();
const results = {};
try {
  const { apiKey, organizationId } = await env.bootstrap();
  await env.startService('management-api');
  await env.startService('runtime-registry');
  const gateway = await env.startService('admin-gateway', { API_KEY_CACHE_TTL_MS: '60000' });
  const nc = await connect({ servers: env.env.NATS_URL });
  const ns = env.env.NATS_NAMESPACE;

  // Live state straight through the registry's edge subject (what the gateway does per frame).
  const edge = async (report) => {
    const msg = await nc.request(`${ns}.runtime-registry.v1.edge`, JSON.stringify({ pattern: 'runtime-registry.v1.edge', id: randomUUID(), data: { report } }), { timeout: 30000 });
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
          await edge({ kind: 'client.register', client: { ...client, userAlias: null, deviceAlias: null, tag: null, roles: [], protocol: 'bench' }, organizationId, gatewayId: 'bench', claims: [{ id: channelId }] });
          await edge({ kind: 'client.join', client, channelId, claim: { id: channelId } });
          for (let k = 0; k < perClient && i * perClient + k < connections; k++) {
            await edge({ kind: 'connection.open', client, channelId, connectionId: `cn${i}-${k}`, type: 'peer', tag: null, streams: { audio: { direction: 'sendrecv' } } });
          }
        }
      }),
    );
  };

  const small = `bench-small-${Date.now()}`;
  await populate(small, 100);
  const headers = { 'x-api-key': apiKey };
  const snapshotUrl = (a) => `${gateway.url}/admin/api/v1.0/applications/${a}`;
  const body = await (await fetch(snapshotUrl(small), { headers })).text();
  console.log(`snapshot of ${small}: ${body}`);

  // Baseline: a bare Node HTTP server answering the same JSON.
  const bare = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise((r) => bare.listen(0, '127.0.0.1', r));
  const bareUrl = `http://127.0.0.1:${bare.address().port}/admin/api/v1.0/applications/${small}`;

  results.bare = await loadTest({ url: bareUrl, concurrency, durationMs });
  console.log(formatResult('bare Node HTTP (same JSON)', results.bare));
  results.gateway100 = await loadTest({ url: snapshotUrl(small), headers, concurrency, durationMs });
  console.log(formatResult('gateway snapshot, 100 connections', results.gateway100));
  bare.close();

  const big = `bench-big-${Date.now()}`;
  const populateStarted = Date.now();
  await populate(big, bigConnections, 4);
  console.log(`populated ${bigConnections} connections in ${((Date.now() - populateStarted) / 1000).toFixed(1)} s`);
  console.log(`snapshot of ${big}: ${await (await fetch(snapshotUrl(big), { headers })).text()}`);
  results.gatewayBig = await loadTest({ url: snapshotUrl(big), headers, concurrency, durationMs });
  console.log(formatResult(`gateway snapshot, ${bigConnections} connections`, results.gatewayBig));

  // register + join + connect through the real /sync socket.
  const sim = await runSimulation({
    gatewayUrl: gateway.url.replace('http', 'ws'),
    managementUrl: env.services['management-api'],
    apiKey,
    natsUrl: env.env.NATS_URL,
    namespace: ns,
    clients: syncClients,
    channels: 50,
    mediaServers: 2,
    connectionType: 'sfu',
    durationMs: 0,
    concurrency: 200,
  });
  results.sync = { clients: sim.clients.connected, failed: sim.clients.failed, clientsPerSecond: sim.connect.clientsPerSecond };
  console.log(`register+join+connect through /sync: ${sim.clients.connected} clients, ${sim.connect.clientsPerSecond.toFixed(0)} clients/s, ${sim.clients.failed} failed`);

  console.log('\nratios');
  console.log(`  gateway / bare (100 connections):      ${(results.gateway100.rps / results.bare.rps).toFixed(2)}  (goal >= 0.5)`);
  console.log(`  ${bigConnections} / 100 connections (gateway): ${(results.gatewayBig.rps / results.gateway100.rps).toFixed(2)}  (goal >= 0.9)`);
  console.log(`  /sync register+join+connect: ${results.sync.clientsPerSecond.toFixed(0)} clients/s (goal >= 1000)`);
  await nc.close();
} finally {
  await env.stop();
}
