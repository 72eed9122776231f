export * from './servers.js';
export * from './service.js';
export * from './wait.js';
