#!/usr/bin/env node
// Entry point of `npm start`, `npm stop`, `npm run reset` and the `ensure-servers` step of `npm test`.
// Plain Node built-ins only: it runs before `npm install`.
import { ensureJanus } from './janus.mjs';
import { MAX_MEDIA_SERVERS, parseStartOptions } from './media-servers.mjs';
import { ensureBinaries, ensureChromium } from './servers.mjs';
import { resetStack, stackStatus, startStack, stopStack } from './stack.mjs';

const USAGE = `Usage: node tools/stack/cli.mjs <command>

Commands:
  start [--servers-only] [--media-servers N]
                          install and build when needed, start NATS, Redis, PostgreSQL, Janus and
                          every service, print the URLs and the admin API key, and stay in the foreground
                          (Ctrl-C stops everything). --servers-only starts just the three servers.
                          --media-servers N (or STACK_MEDIA_SERVERS=N) starts N Janus + media-agent
                          pairs instead of one (1 to ${MAX_MEDIA_SERVERS}).
  stop                    stop a running stack (from another terminal)
  reset                   stop, then delete .data/stack (all local data and the admin key)
  status                  show what runs
  ensure-servers          install nats-server, redis-server, PostgreSQL, Janus and Chromium with apt-get when missing

Set NATS_URL, REDIS_URL or DATABASE_URL to use an existing server instead of a local one.`;

async function main(argv) {
  const [command, ...rest] = argv;
  if (command !== 'start' && rest.length) return usage(`Unknown option ${rest[0]}.`);
  switch (command) {
    case 'start': {
      let options;
      try {
        options = parseStartOptions(rest);
      } catch (error) {
        return usage(error.message);
      }
      await startStack(options);
      return; // stays alive until a signal stops the stack
    }
    case 'stop':
      await stopStack();
      return;
    case 'reset':
      await resetStack();
      return;
    case 'status':
      process.exitCode = (await stackStatus()) ? 0 : 3;
      return;
    case 'ensure-servers': {
      const found = ensureBinaries({ install: true });
      console.log(`nats-server   ${found.nats}`);
      console.log(`redis-server  ${found.redis}`);
      console.log(`PostgreSQL    ${found.postgresBinDir}`);
      console.log(`ffmpeg        ${found.ffmpeg ?? 'not installed (optional)'}`);
      const janus = ensureJanus({ install: true });
      console.log(`janus         ${janus.bin ?? `not installed (${janus.reason}); media-agent is not started`}`);
      console.log(`chromium      ${ensureChromium({ install: true }) ?? 'not installed (the browser tests need it)'}`);
      return;
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return;
    default:
      return usage(`Unknown command ${command}.`);
  }
}

function usage(problem) {
  console.error(`${problem}\n\n${USAGE}`);
  process.exitCode = 2;
}

main(process.argv.slice(2)).catch((error) => {
  if (error?.reported) process.exit(1);
  if (error?.expected) {
    console.error(`✖ ${error.message}`);
    if (error.logTail)
      console.error(
        error.logTail
          .split('\n')
          .map((l) => `  │ ${l}`)
          .join('\n'),
      );
    process.exit(1);
  }
  console.error(error);
  process.exit(1);
});
