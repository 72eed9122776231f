export * from './validation/validate.js';
export * from './validation/well-formed.js';
export * from './interface-a/index.js';
export * from './interface-b/index.js';
export * from './webhooks/index.js';
export * from './problem/index.js';
export * from './messaging/index.js';
export * from './edge/index.js';
