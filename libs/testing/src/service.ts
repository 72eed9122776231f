import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: the nearest ancestor whose package.json declares workspaces. */
export function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      try {
        if (JSON.parse(fs.readFileSync(file, 'utf8')).workspaces) return dir;
      } catch {
        // not the root
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('Could not find the repository root (a package.json with "workspaces").');
    dir = parent;
  }
}

export interface AppDeclaration {
  /** Directory under apps/. */
  dir: string;
  /** "switchboard.service" of its package.json. */
  service: string;
  port: number;
  /** Absolute paths; migrate and bootstrap are null when not declared. */
  main: string;
  migrate: string | null;
  bootstrap: string | null;
}

/** The app whose apps/<dir> or `switchboard.service` is `name`, from its package.json "switchboard" key. */
export function findApp(name: string): AppDeclaration {
  const root = repoRoot();
  const appsDir = path.join(root, 'apps');
  const dirs = fs.existsSync(appsDir) ? fs.readdirSync(appsDir).sort() : [];
  const known: string[] = [];
  for (const dir of dirs) {
    const file = path.join(appsDir, dir, 'package.json');
    if (!fs.existsSync(file)) continue;
    const decl = JSON.parse(fs.readFileSync(file, 'utf8')).switchboard;
    if (!decl || typeof decl !== 'object') continue;
    known.push(decl.service);
    if (dir !== name && decl.service !== name) continue;
    if (typeof decl.main !== 'string') throw new Error(`apps/${dir}/package.json: "switchboard.main" is missing.`);
    const at = (p: unknown) => (typeof p === 'string' ? path.join(appsDir, dir, p) : null);
    return {
      dir,
      service: decl.service,
      port: decl.port,
      main: at(decl.main) as string,
      migrate: at(decl.migrate),
      bootstrap: at(decl.bootstrap),
    };
  }
  throw new Error(
    `No app named ${name} (known: ${known.join(', ') || 'none'}); apps declare themselves with a "switchboard" key in apps/<dir>/package.json.`,
  );
}

const handedOut = new Set<number>();

/** A TCP port free on 127.0.0.1 right now, never the same one twice in this process. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = net.createServer();
      server.unref();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const { port: p } = server.address() as net.AddressInfo;
        server.close(() => resolve(p));
      });
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('Could not find a free TCP port.');
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SpawnedService {
  pid: number;
  /** http://<HTTP_HOST>:<HTTP_PORT> when HTTP_PORT was given. */
  url: string | undefined;
  /** Sends `signal` (SIGTERM by default), SIGKILLs after `timeoutMs`, resolves when it has exited. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<ExitInfo>;
  waitForExit(): Promise<ExitInfo>;
  /** Everything it printed so far (stdout and stderr interleaved; the last 2 MB). */
  output(): string;
}

export interface SpawnServiceOptions {
  /** How long to wait for /readyz to answer 200 (default 30000 ms). */
  readyTimeoutMs?: number;
}

const OUTPUT_LIMIT = 2 * 1024 * 1024;
const running = new Set<ChildProcess>();

function killRunning(): void {
  for (const child of running) child.kill('SIGKILL');
}

function track(child: ChildProcess): void {
  // One exit hook while services run, so a test that forgets stop() leaves no orphan behind.
  if (running.size === 0) process.on('exit', killRunning);
  running.add(child);
  child.once('exit', () => {
    running.delete(child);
    if (running.size === 0) process.off('exit', killRunning);
  });
}

function describeExit(exit: ExitInfo): string {
  return exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
}

/**
 * Starts `node apps/<dir>/<main>` of the app named `name` (directory or service name) with `env`
 * merged over process.env (HTTP_HOST defaults to 127.0.0.1). When env has HTTP_PORT, resolves only
 * once GET /readyz answers 200; throws with the service's output if it exits or times out first.
 */
export async function spawnService(
  name: string,
  env: Record<string, string | undefined> = {},
  options: SpawnServiceOptions = {},
): Promise<SpawnedService> {
  const app = findApp(name);
  if (!fs.existsSync(app.main)) {
    throw new Error(
      `${path.relative(repoRoot(), app.main)} does not exist: build ${app.service} first (npm run build).`,
    );
  }
  const mergedEnv: NodeJS.ProcessEnv = { HTTP_HOST: '127.0.0.1', ...process.env, ...env };
  const child = spawn(process.execPath, [app.main], {
    cwd: repoRoot(),
    env: mergedEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) {
    const error = await new Promise<Error>((resolve) => child.once('error', resolve));
    throw new Error(`Could not start ${app.service}: ${error.message}`);
  }
  track(child);

  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    if (output.length > OUTPUT_LIMIT) output = output.slice(-OUTPUT_LIMIT);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);

  let exitInfo: ExitInfo | undefined;
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolve(exitInfo);
    });
  });

  const stop = async (signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 10000): Promise<ExitInfo> => {
    if (exitInfo) return exitInfo;
    child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const first = await Promise.race([exited, timedOut]);
    clearTimeout(timer);
    if (first === 'timeout') child.kill('SIGKILL');
    return exited;
  };

  const port = mergedEnv.HTTP_PORT;
  const url = port ? `http://${mergedEnv.HTTP_HOST}:${port}` : undefined;
  if (url) {
    // With OPS_PORT the probes are there, not on HTTP_PORT.
    const readyUrl = mergedEnv.OPS_PORT ? `http://${mergedEnv.HTTP_HOST}:${mergedEnv.OPS_PORT}` : url;
    const readyTimeoutMs = options.readyTimeoutMs ?? 30000;
    const deadline = Date.now() + readyTimeoutMs;
    let last = 'no answer';
    for (;;) {
      if (exitInfo) {
        throw new Error(
          `${app.service} ${describeExit(exitInfo)} before /readyz answered 200. Its output:\n${output.slice(-8000)}`,
        );
      }
      try {
        const res = await fetch(`${readyUrl}/readyz`, { signal: AbortSignal.timeout(2000) });
        await res.body?.cancel().catch(() => {});
        if (res.status === 200) break;
        last = `HTTP ${res.status}`;
      } catch (error) {
        last = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
      }
      if (Date.now() >= deadline) {
        await stop('SIGKILL');
        throw new Error(
          `${app.service} was not ready within ${readyTimeoutMs} ms (${readyUrl}/readyz last answered: ${last}). Its output:\n${output.slice(-8000)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  return {
    pid: child.pid,
    url,
    stop,
    waitForExit: () => exited,
    output: () => output,
  };
}
