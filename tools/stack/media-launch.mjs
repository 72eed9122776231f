// `npm start`'s media servers: one Janus per pair, then the pair's media-agent as a service of its own
// (media-agent, media-agent-2, ...). A Janus that cannot start leaves its pair out; the rest runs on.
import { camelCase } from './apps.mjs';
import { isStackJanus, startStackJanus } from './janus.mjs';
import { janusDataDir, janusLabel, janusNumber } from './media-servers.mjs';
import { formatError } from './report.mjs';
import { stopPid } from './servers.mjs';
import { localSecrets, MEDIA_AGENT } from './stack-state.mjs';

/** Stops every Janus an earlier run left in stack.json, also those of pairs this run does not start. */
async function stopLeftoverJanus(launcher) {
  for (const [name, pid] of Object.entries(launcher.previous?.pids ?? {})) {
    const number = janusNumber(name);
    if (number === null || !isStackJanus(pid, janusDataDir(launcher.paths.dir, number))) continue;
    launcher.log(`Stopping ${janusLabel(number)} left over from an earlier run (pid ${pid})…`);
    await stopPid(pid, { timeoutMs: 5000 });
  }
}

/**
 * Starts the Janus of each pair and resolves to `apps` with media-agent replaced by one app per
 * pair whose Janus runs (its service name, HTTP port and `mediaPair`). Without Janus
 * (`launcher.mediaNote` says why) media-agent is left out.
 */
export async function startMediaServers(launcher, apps, pairs) {
  const agent = apps.find((a) => a.service === MEDIA_AGENT);
  if (!agent) return apps;
  await stopLeftoverJanus(launcher);
  launcher.mediaPairCount = pairs.length;
  const agents = [];
  const failures = [];
  for (const pair of launcher.mediaNote ? [] : pairs) {
    launcher.checkInterrupted();
    const label = janusLabel(pair.number);
    try {
      const janus = await startStackJanus({
        dataDir: pair.janusDataDir,
        secrets: localSecrets(launcher.paths),
        logFile: pair.janusLog,
        wsPort: pair.wsPort,
        adminPort: pair.adminPort,
        rtpPortRange: pair.rtpPortRange,
        agentDataDir: pair.agentDataDir,
        label,
      });
      launcher.trackServer(pair.janusName, janus.pid);
      launcher.mediaEnvs.set(pair.agentService, janus.env);
      launcher.urls[camelCase(pair.janusName)] = janus.wsUrl;
      launcher.log(`${label.padEnd(10)} started (pid ${janus.pid}) on ${janus.wsUrl}, RTP ${pair.rtpPortRange}`);
      agents.push({ ...agent, service: pair.agentService, port: pair.agentPort, mediaPair: pair });
    } catch (error) {
      if (error?.interrupted) throw error;
      failures.push(`${label} did not start (${formatError(error).split('\n')[0]})`);
      launcher.log(`warning: ${failures.at(-1)}; starting without ${pair.agentService}.`);
    }
  }
  if (failures.length) launcher.mediaNote = failures.join('; ');
  launcher.save();
  const index = apps.indexOf(agent);
  return [...apps.slice(0, index), ...agents, ...apps.slice(index + 1)];
}
