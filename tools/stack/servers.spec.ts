import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  findBinary,
  findPostgresBinDir,
  freePort,
  isAlive,
  isPortInUse,
  isServerOf,
  pidFilePath,
  readPidFile,
  StackError,
  startRedis,
  stopPid,
  stopServer,
  waitForTcp,
} from './servers.mjs';

const scratch = fs.mkdtempSync(path.join(process.env.SB_TEST_DATA_DIR ?? os.tmpdir(), 'servers-spec-'));

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('findBinary', () => {
  it('finds the server binaries outside PATH too', () => {
    expect(findBinary('nats-server')).toMatch(/nats-server$/);
    expect(findBinary('redis-server')).toMatch(/redis-server$/);
    const binDir = findPostgresBinDir();
    expect(binDir).not.toBeNull();
    expect(fs.existsSync(path.join(binDir as string, 'initdb'))).toBe(true);
  });

  it('returns null for a missing program', () => {
    expect(findBinary('surely-not-a-program-xyz')).toBeNull();
  });
});

describe('freePort', () => {
  it('hands out distinct bindable ports', async () => {
    const ports = await Promise.all(Array.from({ length: 10 }, () => freePort()));
    expect(new Set(ports).size).toBe(10);
    for (const port of ports) expect(await isPortInUse(port)).toBe(false);
  });
});

describe('waitForTcp', () => {
  it('fails with a StackError naming the address when nothing listens', async () => {
    const port = await freePort();
    const error = await waitForTcp('127.0.0.1', port, 200).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StackError);
    expect((error as Error).message).toContain(`127.0.0.1:${port}`);
  });

  it('resolves once the port accepts', async () => {
    const server = net.createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as net.AddressInfo;
    await expect(waitForTcp('127.0.0.1', port, 1000)).resolves.toBeUndefined();
    server.close();
  });
});

describe('stopPid', () => {
  it('tolerates a pid that is not running', async () => {
    expect(isAlive(2 ** 22 + 12345)).toBe(false);
    await expect(stopPid(2 ** 22 + 12345)).resolves.toBe(false);
  });
});

describe('startRedis and stopPid', () => {
  it('leaves no process and a closed port behind', async () => {
    const port = await freePort();
    const dataDir = path.join(scratch, 'redis');
    const logFile = path.join(scratch, 'logs', 'redis.log');
    const redis = await startRedis({ port, dataDir, logFile, persist: false });
    expect(redis.url).toBe(`redis://127.0.0.1:${port}`);
    expect(redis.reused).toBe(false);
    expect(isAlive(redis.pid)).toBe(true);
    expect(readPidFile(pidFilePath('redis', dataDir))).toBe(redis.pid);
    expect(await portAccepts(port)).toBe(true);

    await expect(stopPid(redis.pid)).resolves.toBe(true);

    expect(isAlive(redis.pid)).toBe(false);
    expect(await portAccepts(port)).toBe(false);
    expect(await isPortInUse(port)).toBe(false);
  });

  it('reuses a running server of the same data directory and port', async () => {
    const port = await freePort();
    const dataDir = path.join(scratch, 'redis-reuse');
    const logFile = path.join(scratch, 'logs', 'redis-reuse.log');
    const first = await startRedis({ port, dataDir, logFile });
    try {
      expect(isServerOf('redis', first.pid, dataDir)).toBe(true);
      expect(isServerOf('redis', first.pid, path.join(scratch, 'elsewhere'))).toBe(false);
      expect(isServerOf('nats', first.pid, dataDir)).toBe(false);
      const second = await startRedis({ port, dataDir, logFile });
      expect(second).toMatchObject({ pid: first.pid, reused: true });
    } finally {
      await stopServer('redis', first.pid, { dataDir });
    }
    expect(fs.existsSync(pidFilePath('redis', dataDir))).toBe(false);
    expect(await isPortInUse(port)).toBe(false);
  });

  it('says which process holds a taken port', async () => {
    const server = net.createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      const error = await startRedis({
        port,
        dataDir: path.join(scratch, 'redis-taken'),
        logFile: path.join(scratch, 'logs', 'taken.log'),
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StackError);
      expect((error as Error).message).toMatch(new RegExp(`Port ${port} .* already in use by pid ${process.pid}`));
    } finally {
      server.close();
    }
  });
});
