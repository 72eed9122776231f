/** A service with an invalid setting refuses to start and names the setting. */
import { findApp } from '@switchboard/testing';
import { spawn } from 'node:child_process';

function start(service: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [findApp(service).main], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const base = {
  NATS_URL: 'nats://127.0.0.1:1',
  REDIS_URL: 'redis://127.0.0.1:1',
  DATABASE_URL: 'postgres://u@127.0.0.1:1/db',
};

describe('configuration validated at start-up', () => {
  it.each([
    ['admin-gateway', { HTTP_PORT: 'eighty' }, 'HTTP_PORT must be an integer'],
    [
      'admin-gateway',
      { ADMIN_CIDR_ALLOWLIST: '10.0.0.0/99' },
      'ADMIN_CIDR_ALLOWLIST item "10.0.0.0/99" is not a CIDR block',
    ],
    [
      'admin-gateway',
      { OAUTH_ISSUER: 'https://issuer.example' },
      'OAUTH_AUDIENCE is required when any OAuth2 setting is set',
    ],
    ['management-api', { DATABASE_URL: 'mysql://x@y/z' }, 'DATABASE_URL must use postgres or postgresql'],
    ['runtime-registry', { NATS_URL: '' }, 'NATS_URL is required'],
    ['webhook-worker', { LOG_LEVEL: 'chatty' }, 'LOG_LEVEL must be one of debug, info, warn, error'],
    ['recording-service', { REDIS_URL: 'http://x' }, 'REDIS_URL must use redis or rediss'],
    ['usage-aggregator', { NATS_REQUEST_TIMEOUT_MS: '5' }, 'NATS_REQUEST_TIMEOUT_MS must be at least 50'],
  ])('%s refuses %j', async (service, bad, message) => {
    const result = await start(service, { ...base, ...bad });
    expect(result.code).toBe(78);
    expect(result.output).toContain(message);
    expect(result.output).not.toMatch(/\n\s+at /);
  });

  it('never echoes a sensitive value', async () => {
    const result = await start('management-api', { ...base, DATABASE_URL: 'mysql://user:hunter2@db/x' });
    expect(result.code).toBe(78);
    expect(result.output).not.toContain('hunter2');
  });
});
