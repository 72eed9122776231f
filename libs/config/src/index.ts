export * from './settings.js';
export * from './common.js';
export * from './cidr.js';
export * from './targets.js';
