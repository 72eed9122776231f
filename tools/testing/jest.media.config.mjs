// The media tests (`tests/media/**/*.netns-spec.ts`): jest run inside the media network namespace
// by tests/media/media-plane.integration-spec.ts through media-netns.mjs. The global setup starts
// NATS, Redis and PostgreSQL inside the namespace, where Janus, the services and the clients run.
import base from '../../jest.config.mjs';

export default {
  ...base,
  rootDir: '../..',
  roots: ['<rootDir>/tests/media'],
  testMatch: ['**/*.netns-spec.ts'],
};
