export * from './subjects.js';
