// Local NATS, Redis and PostgreSQL servers for the stack launcher and the jest global setup.
//
// Plain Node built-ins only: this runs before `npm install`. `pg` is imported lazily, and only to
// check that PostgreSQL accepts connections (pg_isready is the fallback when it is not installed).
export { StackError } from './servers/stack-error.mjs';
export { aptInstall, ensureBinaries, ensureChromium, findBinary, findPostgresBinDir } from './servers/binaries.mjs';
export { describePortOwners, freePort, isPortInUse, LOOPBACK, waitForTcp } from './servers/ports.mjs';
export {
  isAlive,
  isServerOf,
  processCommandLine,
  processMatches,
  readLogTail,
  spawnDetached,
  stopPid,
} from './servers/processes.mjs';
export { pidFilePath, readPidFile, stopRecordedServer, stopServer } from './servers/launch.mjs';
export { startNats } from './servers/nats.mjs';
export { startRedis } from './servers/redis.mjs';
export { ensureDatabase, quoteIdent, startPostgres, withDatabase } from './servers/postgres.mjs';
