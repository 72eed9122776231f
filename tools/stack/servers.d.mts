// Types for servers.mjs (plain JavaScript so that it runs before `npm install`).

export type ServerName = 'nats' | 'redis' | 'postgres';

export declare class StackError extends Error {
  constructor(message: string, options?: { logTail?: string; cause?: unknown });
  readonly expected: true;
  logTail?: string;
}

export declare const LOOPBACK: '127.0.0.1';
export declare const STOP_SIGNALS: Readonly<Record<ServerName, NodeJS.Signals>>;

export declare function findBinary(name: string): string | null;
export declare function findPostgresBinDir(): string | null;

export interface Binaries {
  nats: string | null;
  redis: string | null;
  postgresBinDir: string | null;
  ffmpeg: string | null;
}
export declare function ensureBinaries(options?: {
  install?: boolean;
  servers?: ServerName[];
  ffmpeg?: boolean;
  log?: (message: string) => void;
}): Binaries;

export declare function freePort(host?: string): Promise<number>;
export declare function isPortInUse(port: number, host?: string): Promise<boolean>;
export declare function waitForTcp(
  host: string,
  port: number,
  timeoutMs?: number,
  options?: { pid?: number; name?: string; logFile?: string; logOffset?: number },
): Promise<void>;
export declare function portOwners(port: number): Array<{ pid: number; command: string }>;
export declare function pidListensOn(pid: number, port: number): boolean;
export declare function describePortOwners(port: number): string;

export declare function isAlive(pid: number): boolean;
export declare function processCommandLine(pid: number): string | null;
export declare function processMatches(pid: number, ...needles: string[]): boolean;
export declare function isSameProgram(pid: number, program: string): boolean;
export declare function isServerOf(name: ServerName, pid: number, dataDir: string): boolean;
export declare function stopPid(
  pid: number,
  options?: { timeoutMs?: number; signal?: NodeJS.Signals },
): Promise<boolean>;
export declare function stopServer(
  name: ServerName,
  pid: number,
  options?: { timeoutMs?: number; dataDir?: string },
): Promise<boolean>;
export declare function stopRecordedServer(
  name: ServerName,
  dataDir: string,
  options?: { timeoutMs?: number },
): Promise<boolean>;
export declare function readLogTail(file: string, offset?: number, lines?: number): string;
export declare function spawnDetached(
  command: string,
  args: string[],
  options: { logFile: string; env?: NodeJS.ProcessEnv; cwd?: string; uid?: number; gid?: number },
): Promise<{ pid: number; child: import('node:child_process').ChildProcess; logOffset: number }>;

export declare function pidFilePath(name: ServerName, dataDir: string): string;
export declare function readPidFile(file: string): number | null;

export interface StartedServer {
  pid: number;
  url: string;
  port: number;
  /** True when a server of an earlier run (found through its PID file) was reused. */
  reused: boolean;
}
interface StartOptions {
  port: number;
  dataDir: string;
  logFile: string;
  host?: string;
  timeoutMs?: number;
  onSpawn?: (pid: number) => void;
}
export declare function startNats(options: StartOptions): Promise<StartedServer>;
export declare function startRedis(options: StartOptions & { persist?: boolean }): Promise<StartedServer>;
export declare function startPostgres(
  options: StartOptions & {
    fsync?: boolean;
    settings?: Record<string, string | number>;
    log?: (message: string) => void;
    initdbCache?: string;
  },
): Promise<StartedServer & { initialized: boolean }>;

export declare function withDatabase(url: string, database: string): string;
export declare function ensureDatabase(adminUrl: string, database: string): Promise<boolean>;
export declare function quoteIdent(name: string): string;
