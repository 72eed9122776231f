// Command-line options of the simulator (see USAGE).

export const USAGE = `Usage: npm run simulate -- --gateway <url> [options]
       node tools/simulator/cli.mjs --gateway <url> [options]

Starts fake media servers and simulated clients against a running Switchboard and prints a JSON
report of what it did (counts, errors, latencies) on stdout; progress goes to stderr.

Application and tokens (one of):
  --management <url>        management API (interface B) base URL; with --api-key, the simulator
                            creates or reuses the application config and gets client tokens from
                            POST /ApplicationConfigs/{id}/Token
  --api-key <key>           API key for the management API (or env SB_API_KEY)
  --shared-secret <secret>  sign client tokens locally instead (the application must exist)
  --application-id <id>     application id (default sim-<random>)
  --application-config-id <id>  reuse this application config (skips the look-up)

Load:
  --gateway <url>           admin-gateway: ws://host:port[/sync] or http://host:port (required)
  --clients <n>             simulated clients (default 10)
  --channels <k>            channels the clients spread over (default 2)
  --media-servers <m>       fake media servers heartbeating over NATS (default 0; needs --nats)
  --nats <url>              NATS URL, e.g. nats://127.0.0.1:14222
  --namespace <ns>          NATS namespace of the deployment (default sb)
  --region <name>           region of the fake media servers
  --churn <rate>            join/leave/mute operations per second, e.g. 10/s (default 0)
  --duration <time>         how long the churn runs, e.g. 30s, 2m, 500ms (default 0)
  --connection-type <t>     sfu, mcu or peer (default sfu)
  --concurrency <n>         clients connecting at the same time (default 50)
  --request-timeout <time>  timeout of every request (default 10s)
  --pipeline                each client sends register, join, connection.open and its states at
                            once instead of waiting for each answer (the gateway runs them in order)
  --quiet                   no progress on stderr
  --help`;

export function parseDuration(value, name = 'duration') {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(String(value).trim());
  if (!m) throw new Error(`--${name} must be a duration like 30s, 2m or 500ms (got ${value})`);
  const n = Number(m[1]);
  return Math.round(n * { ms: 1, s: 1000, m: 60000, h: 3600000 }[m[2] ?? 's']);
}

export function parseRate(value) {
  const m = /^(\d+(?:\.\d+)?)(?:\/s)?$/.exec(String(value).trim());
  if (!m) throw new Error(`--churn must be a rate like 10/s (got ${value})`);
  return Number(m[1]);
}

function count(value, name, min = 0) {
  if (!/^\d+$/.test(String(value))) throw new Error(`--${name} must be a whole number (got ${value})`);
  const n = Number(value);
  if (n < min) throw new Error(`--${name} must be at least ${min}`);
  return n;
}

/** Parses argv into simulation options; throws with a message naming the bad option. */
export function parseArgs(argv, env = process.env) {
  const options = { apiKey: env.SB_API_KEY };
  const flags = { quiet: false, help: false };
  const take = (i, name) => {
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new Error(`--${name} needs a value`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [key, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(2, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg.slice(2), undefined];
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const value = () => {
      if (inline !== undefined) return inline;
      const v = take(i, key);
      i++;
      return v;
    };
    switch (key) {
      case 'help':
        flags.help = true;
        break;
      case 'quiet':
        flags.quiet = true;
        break;
      case 'pipeline':
        options.pipeline = true;
        break;
      case 'gateway':
        options.gatewayUrl = value();
        break;
      case 'management':
        options.managementUrl = value();
        break;
      case 'api-key':
        options.apiKey = value();
        break;
      case 'shared-secret':
        options.sharedSecret = value();
        break;
      case 'application-id':
        options.applicationId = value();
        break;
      case 'application-config-id':
        options.applicationConfigId = value();
        break;
      case 'nats':
        options.natsUrl = value();
        break;
      case 'namespace':
        options.namespace = value();
        break;
      case 'region':
        options.region = value();
        break;
      case 'clients':
        options.clients = count(value(), key);
        break;
      case 'channels':
        options.channels = count(value(), key, 1);
        break;
      case 'media-servers':
        options.mediaServers = count(value(), key);
        break;
      case 'churn':
        options.churnPerSecond = parseRate(value());
        break;
      case 'duration':
        options.durationMs = parseDuration(value(), key);
        break;
      case 'connection-type':
        options.connectionType = value();
        break;
      case 'concurrency':
        options.concurrency = count(value(), key, 1);
        break;
      case 'request-timeout':
        options.requestTimeoutMs = parseDuration(value(), key);
        break;
      default:
        throw new Error(`unknown option --${key}`);
    }
  }
  if (!flags.help) {
    if (!options.gatewayUrl) throw new Error('--gateway is required');
    if (!options.managementUrl && !options.sharedSecret)
      throw new Error('give --management with --api-key, or --shared-secret with --application-id');
    if (options.managementUrl && !options.apiKey)
      throw new Error('--api-key (or SB_API_KEY) is required with --management');
    if (options.sharedSecret && !options.managementUrl && !options.applicationId)
      throw new Error('--application-id is required with --shared-secret');
    if ((options.mediaServers ?? 0) > 0 && !options.natsUrl) throw new Error('--nats is required with --media-servers');
  }
  if (options.apiKey === undefined) delete options.apiKey;
  return { options, flags };
}
