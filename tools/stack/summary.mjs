// What `npm start` prints once the stack runs, and the HTTP probe it and `status` use.
import { janusLabel } from './media-servers.mjs';
import { rel } from './report.mjs';
import { CONSOLE, DEMO_ROOM } from './stack-state.mjs';

const LABELS = {
  'admin-gateway': 'Admin API',
  'management-api': 'Management API',
  [CONSOLE]: 'Console',
  [DEMO_ROOM]: 'Demo room',
};

function apiUrl(app) {
  const base = `http://127.0.0.1:${app.port}`;
  return app.service === 'admin-gateway' ? `${base}/admin/api/v1.0` : base;
}

export async function httpStatus(url, timeoutMs = 2000) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel().catch(() => {});
    return { status: res.status };
  } catch (error) {
    return { error: error.cause?.code ?? error.name ?? error.message };
  }
}

export async function printSummary(launcher, apps) {
  const { urls, mediaNote, state, paths, log } = launcher;
  const lines = ['', 'Switchboard is running.', ''];
  const row = (label, value) => lines.push(`  ${label.padEnd(18)} ${value}`);
  for (const app of apps) {
    if (app.mediaPair) continue; // listed with its Janus below
    const label = LABELS[app.service] ?? app.service;
    if (app.service === CONSOLE) {
      // The web application answers every path, so no OpenAPI probe; it signs in with the admin API key.
      row(label, `${apiUrl(app)}  (sign in with the admin API key below)`);
      continue;
    }
    if (app.service === DEMO_ROOM) {
      if (launcher.services?.has(DEMO_ROOM))
        row(label, `${apiUrl(app)}/?room=demo  (camera and microphone; media needs Janus to reach the browser)`);
      else row(label, 'not started (no admin API key)');
      continue;
    }
    row(label, apiUrl(app));
    const docs = await openApiUrl(app);
    if (docs) row('', `OpenAPI: ${docs}`);
    // The gateway also documents its /sync WebSocket, next to its OpenAPI document.
    if (docs && app.service === 'admin-gateway' && !docs.includes(' '))
      row('', `AsyncAPI (/sync): ${docs.replace(/openapi\.json$/, 'asyncapi.json')}`);
  }
  if (apps.length) lines.push('');
  const agents = apps.filter((a) => a.mediaPair);
  for (const { mediaPair: pair, service, port } of agents) {
    const janusUrl = launcher.mediaEnvs.get(service)?.JANUS_URL;
    row(janusLabel(pair.number), `${janusUrl} (RTP ${pair.rtpPortRange}, log ${rel(paths, pair.janusLog)})`);
    row('', `${service} http://127.0.0.1:${port} (data ${rel(paths, pair.agentDataDir)}, log ${service}.log)`);
  }
  if (mediaNote && agents.length) row('', `warning: ${mediaNote}.`);
  else if (mediaNote)
    row(
      'Media server',
      `none: ${mediaNote}. Only the simulator's heartbeat-only media servers (npm run simulate) are available.`,
    );
  row('NATS', urls.nats);
  row('Redis', urls.redis);
  row('PostgreSQL', urls.database);
  lines.push('');
  if (state.adminApiKey) row('Admin API key', `${state.adminApiKey}  (organization ${state.organizationId})`);
  else if (apps.some((a) => a.bootstrap)) row('Admin API key', `unknown (see the warning above)`);
  row('Stack file', paths.stackFile);
  row('Logs', paths.logs);
  lines.push('', 'Stop with Ctrl-C or `npm stop`.', '');
  log(lines.join('\n'));
}

async function openApiUrl(app) {
  const base = `http://127.0.0.1:${app.port}`;
  const candidates = [...new Set([`${apiUrl(app)}/openapi.json`, `${base}/openapi.json`])];
  for (const url of candidates) {
    if ((await httpStatus(url, 1500)).status === 200) return url;
  }
  return ['admin-gateway', 'management-api'].includes(app.service) ? `${base}/openapi.json (not answering yet)` : null;
}
