import { int, loadConfig, oneOf, str, url, type ConfigOf } from '@switchboard/config';

/** Settings of the demo room: an operator's own backend, holding an interface B key, and its page. */
export const settings = {
  httpHost: str({
    env: 'HTTP_HOST',
    default: '127.0.0.1',
    description: 'Address the demo room binds to (0.0.0.0 in containers)',
  }),
  httpPort: int({ env: 'HTTP_PORT', default: 8095, min: 0, max: 65535, description: 'HTTP port of the demo room' }),
  logLevel: oneOf(['debug', 'info', 'warn', 'error'] as const, {
    env: 'LOG_LEVEL',
    default: 'info',
    description: 'Lowest log level written',
  }),
  managementUrl: url({
    env: 'DEMO_MANAGEMENT_URL',
    default: 'http://127.0.0.1:8081',
    protocols: ['http', 'https'],
    description: "Base URL of management-api (interface B): the demo room asks its Token action for clients' tokens",
  }),
  apiKey: str({
    env: 'DEMO_API_KEY',
    sensitive: true,
    minLength: 1,
    description: 'An interface B API key of the organization owning the application (sent as X-API-Key)',
  }),
  applicationId: str({
    env: 'DEMO_APPLICATION_ID',
    default: 'demo-room',
    pattern: /^[A-Za-z0-9._-]{1,64}$/,
    description:
      'Application id of the rooms; its application config is looked up on interface B (created when missing)',
  }),
  syncUrl: url({
    env: 'DEMO_SYNC_URL',
    default: 'ws://127.0.0.1:8080/sync',
    protocols: ['ws', 'wss'],
    description: "URL of admin-gateway's /sync WebSocket as the browser reaches it (also allowed by the page's CSP)",
  }),
  upstreamTimeoutMs: int({
    env: 'DEMO_UPSTREAM_TIMEOUT_MS',
    default: 10000,
    min: 100,
    max: 120000,
    description: 'How long a call to interface B may take before the demo room answers 504',
  }),
};

export type DemoRoomConfig = ConfigOf<typeof settings>;

export function loadDemoRoomConfig(env: Record<string, string | undefined> = process.env): DemoRoomConfig {
  return loadConfig(settings, env);
}
