// How many Janus + media-agent pairs `npm start` runs (`--media-servers N`, STACK_MEDIA_SERVERS) and
// what each pair gets: names, ports, RTP range, data directories and logs. Pure: no process is started.
import path from 'node:path';
import { STACK_JANUS_PORTS } from './janus.mjs';
import { StackError } from './servers.mjs';

export const MEDIA_SERVERS_FLAG = '--media-servers';
export const MEDIA_SERVERS_SETTING = 'STACK_MEDIA_SERVERS';
export const MAX_MEDIA_SERVERS = 4;
/** Pair n announces and uses UDP ports RTP_PORT_BASE + (n-1) * RTP_PORTS_PER_SERVER and the 999 after. */
const RTP_PORT_BASE = 40000;
const RTP_PORTS_PER_SERVER = 1000;
const JANUS = 'janus';
const MEDIA_AGENT = 'media-agent';

/** "2" → 2; anything but a whole number from 1 to MAX_MEDIA_SERVERS throws a StackError naming `source`. */
export function parseMediaServerCount(text, source) {
  const value = String(text ?? '').trim();
  const count = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(count >= 1 && count <= MAX_MEDIA_SERVERS)) {
    throw new StackError(
      `${source} must be a whole number from 1 to ${MAX_MEDIA_SERVERS} (media servers to start), not "${value}".`,
    );
  }
  return count;
}

/**
 * The options of `start`: { serversOnly, mediaServers } from `--servers-only`, `--media-servers N` or
 * `--media-servers=N`; without the flag, STACK_MEDIA_SERVERS from `env`; else one.
 */
export function parseStartOptions(args, env = process.env) {
  let serversOnly = false;
  let flagValue;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--servers-only') serversOnly = true;
    else if (arg === MEDIA_SERVERS_FLAG) {
      if (i + 1 >= args.length)
        throw new StackError(`${MEDIA_SERVERS_FLAG} needs a number, e.g. ${MEDIA_SERVERS_FLAG} 2.`);
      flagValue = args[++i];
    } else if (arg.startsWith(`${MEDIA_SERVERS_FLAG}=`)) flagValue = arg.slice(MEDIA_SERVERS_FLAG.length + 1);
    else throw new StackError(`Unknown option ${arg}.`);
  }
  if (flagValue !== undefined)
    return { serversOnly, mediaServers: parseMediaServerCount(flagValue, MEDIA_SERVERS_FLAG) };
  const setting = env[MEDIA_SERVERS_SETTING];
  const fromSetting =
    setting === undefined || setting === '' ? 1 : parseMediaServerCount(setting, MEDIA_SERVERS_SETTING);
  return { serversOnly, mediaServers: fromSetting };
}

/** "janus" for pair 1 (the names of a one-server stack stay as they were), "janus-2" for pair 2, ... */
const numbered = (base, number) => (number === 1 ? base : `${base}-${number}`);

/**
 * The `count` pairs, numbered from 1: Janus WebSocket/admin ports and RTP range after those of
 * pair 1, the media-agent's HTTP port after `agentPort` (the port media-agent declares), and the
 * directories under `stackDir`. Throws a StackError when an agent port is another service's.
 */
export function mediaServerPairs(count, { stackDir, logsDir, agentPort, servicePorts = [] }) {
  const pairs = [];
  for (let number = 1; number <= count; number++) {
    const offset = number - 1;
    const janusName = numbered(JANUS, number);
    const rtpFirst = RTP_PORT_BASE + offset * RTP_PORTS_PER_SERVER;
    const pair = {
      number,
      janusName,
      agentService: numbered(MEDIA_AGENT, number),
      wsPort: STACK_JANUS_PORTS.ws + offset,
      adminPort: STACK_JANUS_PORTS.admin + offset,
      rtpPortRange: `${rtpFirst}-${rtpFirst + RTP_PORTS_PER_SERVER - 1}`,
      agentPort: agentPort + offset,
      janusDataDir: path.join(stackDir, janusName),
      agentDataDir: path.join(stackDir, numbered(MEDIA_AGENT, number)),
      janusLog: path.join(logsDir, `${janusName}.log`),
    };
    if (number > 1 && servicePorts.includes(pair.agentPort)) {
      throw new StackError(
        `${pair.agentService} would listen on port ${pair.agentPort}, which another service declares; start fewer media servers.`,
      );
    }
    pairs.push(pair);
  }
  return pairs;
}

/** The pair number of a stack.json pid name ("janus" → 1, "janus-3" → 3), or null for any other name. */
export function janusNumber(name) {
  const match = /^janus(?:-(\d+))?$/.exec(name);
  return match ? Number(match[1] ?? 1) : null;
}

/** "media-agent-2" → "media-agent": the app a numbered service runs. */
export function appServiceOf(name) {
  return /^media-agent-\d+$/.test(name) ? MEDIA_AGENT : name;
}

/** The Janus data directory of pair `number` (what isStackJanus looks for on its command line). */
export function janusDataDir(stackDir, number) {
  return path.join(stackDir, numbered(JANUS, number));
}

/** "Janus", "Janus 2", ...: how the launcher names a pair's Janus in messages. */
export function janusLabel(number) {
  return number === 1 ? 'Janus' : `Janus ${number}`;
}

/**
 * The pair's settings for its media-agent. Its Janus, data directory (so its stable media server id)
 * and, with several pairs, its announced RTP range belong to the pair and win over the environment;
 * one MEDIA_SERVER_ID from the environment cannot name several servers, so it is dropped then.
 */
export function mediaAgentEnv(janusEnv, pairCount, env = process.env) {
  const own = ['JANUS_URL', 'JANUS_ADMIN_URL', 'MEDIA_AGENT_DATA_DIR'];
  if (pairCount > 1) own.push('MEDIA_SERVER_ADDRESSES');
  const merged = { ...janusEnv, ...env };
  for (const key of own) merged[key] = janusEnv[key];
  if (pairCount > 1) delete merged.MEDIA_SERVER_ID;
  return merged;
}
