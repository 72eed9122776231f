export * from './servers.js';
export * from './service.js';
export * from './wait.js';
export * from './nats-server.js';
export * from './own-postgres.js';
export * from './liveswitch-token-vectors.js';
