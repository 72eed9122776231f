/**
 * A request arriving on a kept-alive connection while the service closes gets the interface's own
 * 503 body (here the plain one) with X-Correlation-Id and `Connection: close`, not Fastify's.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Controller, Get } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { testNamespace, testServers } from '@switchboard/testing';
import { renderPlainError } from './errors.js';
import { JsonLogger } from './logger.js';
import { createService } from './service.js';

@Controller()
class SlowController {
  @Get('slow')
  async slow() {
    await new Promise((resolve) => setTimeout(resolve, 400));
    return { done: true };
  }
}

describe('a request while the service closes', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    const config = {
      httpHost: '127.0.0.1',
      httpPort: 0,
      logLevel: 'error' as const,
      natsUrl: testServers().natsUrl,
      natsNamespace: testNamespace('kit_close'),
      natsRequestTimeoutMs: 1000,
      shutdownTimeoutMs: 1000,
    };
    app = await createService({
      name: 'kit-close',
      config,
      imports: [{ module: class CloseTestModule {}, controllers: [SlowController] }],
      rpcServer: false,
      renderHttpError: renderPlainError,
      logger: new JsonLogger('kit-close', 'error', () => undefined),
    });
    await app.listen(0, '127.0.0.1');
  });

  it('answers 503 in the service error body, after the request in flight', async () => {
    const { port } = app.getHttpServer().address() as AddressInfo;
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write('GET /slow HTTP/1.1\r\nhost: x\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closing = app.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.write('GET /slow HTTP/1.1\r\nhost: x\r\nx-correlation-id: closing-1\r\n\r\n');
    await closed;
    await closing;
    const [first, second] = received.split(/(?=HTTP\/1\.1 )/);
    expect(first).toMatch(/^HTTP\/1\.1 200 /);
    expect(second).toMatch(/^HTTP\/1\.1 503 /);
    expect(second).toMatch(/\r\nx-correlation-id: closing-1\r\n/i);
    expect(second).toMatch(/\r\nconnection: close\r\n/i);
    expect(JSON.parse(second!.split('\r\n\r\n')[1]!)).toEqual({
      code: 'Unavailable',
      message: 'The service is shutting down; try again.',
    });
  });
});
