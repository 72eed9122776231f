export * from './subjects.js';
export * from './runtime.js';
