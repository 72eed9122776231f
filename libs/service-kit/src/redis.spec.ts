import net from 'node:net';
import { createRedis } from './redis.js';
import { JsonLogger } from './logger.js';

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('createRedis', () => {
  it('logs a lost connection once, however many reconnect attempts fail', async () => {
    const logger = new JsonLogger('test', 'info');
    const events: Array<[string, string]> = [];
    logger.event = (level, msg) => void events.push([level, msg]);
    const redis = createRedis(`redis://127.0.0.1:${await closedPort()}`, 'test', { logger });
    const errors: unknown[] = [];
    redis.on('error', (e) => errors.push(e));
    try {
      const deadline = Date.now() + 10_000;
      while (errors.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(errors.length).toBeGreaterThanOrEqual(3);
      expect(events).toEqual([['warn', 'Redis connection lost; reconnecting']]);
    } finally {
      redis.disconnect();
    }
  });
});
