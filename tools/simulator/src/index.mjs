// The simulator as a library: tests and benchmarks drive it programmatically.
export { DEFAULTS, runSimulation, Simulation, syncUrlOf } from './simulation.mjs';
export { SyncClient, SyncRequestError } from './sync-client.mjs';
export { leanWebSocketClass } from './sdk-socket.mjs';
export { FakeMediaServer } from './media-server.mjs';
export { ManagementClient, TokenSource, signClientToken } from './tokens.mjs';
export { OperationStats, percentiles } from './latency.mjs';
export { parseArgs, parseDuration, parseRate, USAGE } from './args.mjs';
