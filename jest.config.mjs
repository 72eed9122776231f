// One jest config for the whole workspace. Unit tests (*.spec.ts) and integration tests
// (*.integration-spec.ts) run together; the global setup starts real NATS, Redis and PostgreSQL
// on free loopback ports with project-local data directories and stops them by PID afterwards.
import { readFileSync } from 'node:fs';

const swc = JSON.parse(readFileSync(new URL('./.swcrc', import.meta.url), 'utf8'));
delete swc.$schema;

export default {
  testEnvironment: 'node',
  testEnvironmentOptions: { customExportConditions: ['source', 'node', 'node-addons'] },
  roots: ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/tools', '<rootDir>/tests'],
  testMatch: ['**/*.spec.ts', '**/*.integration-spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  modulePathIgnorePatterns: ['<rootDir>/apps/[^/]+/dist/', '<rootDir>/libs/[^/]+/dist/'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { ...swc, sourceMaps: 'inline' }] },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  globalSetup: '<rootDir>/tools/testing/global-setup.mjs',
  globalTeardown: '<rootDir>/tools/testing/global-teardown.mjs',
  testTimeout: 60000,
};
