import { ConfigError } from '@switchboard/config';
import { loadWebhookWorkerConfig } from './config.js';

describe('loadWebhookWorkerConfig', () => {
  const base = {
    NATS_URL: 'nats://127.0.0.1:4222',
    REDIS_URL: 'redis://127.0.0.1:6379',
    DATABASE_URL: 'postgres://u@127.0.0.1/db',
  };

  it('takes an attempt timeout up to the shutdown grace period', () => {
    expect(loadWebhookWorkerConfig(base)).toMatchObject({ timeoutMs: 10000, shutdownTimeoutMs: 10000 });
    expect(
      loadWebhookWorkerConfig({ ...base, WEBHOOK_TIMEOUT_MS: '30000', SHUTDOWN_TIMEOUT_MS: '30000' }).timeoutMs,
    ).toBe(30000);
  });

  it('refuses an attempt timeout longer than the shutdown grace period, naming both', () => {
    expect(() => loadWebhookWorkerConfig({ ...base, WEBHOOK_TIMEOUT_MS: '30000' })).toThrow(
      new ConfigError(
        'WEBHOOK_TIMEOUT_MS',
        '(30000) must not exceed SHUTDOWN_TIMEOUT_MS (10000): a stopping replica waits for its attempts in flight',
      ),
    );
  });
});
