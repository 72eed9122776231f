export * from './subjects.js';
export * from './runtime.js';
export * from './recordings.js';
export * from './usage.js';
export * from './webhooks.js';
export * from './changes.js';
export * from './parked.js';
export * from './media.js';
