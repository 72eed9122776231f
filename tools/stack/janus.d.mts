// Types for janus.mjs (plain JavaScript, like servers.mjs).

export interface JanusSettings {
  dataDir: string;
  wsPort: number;
  adminPort: number;
  adminSecret: string;
  roomAdminKey: string;
  sessionTimeoutSeconds?: number;
  rtpPortRange?: string;
  host?: string;
}

export interface StartedJanus {
  pid: number;
  wsUrl: string;
  adminUrl: string;
  logFile: string;
}

export declare function findJanus(): string | null;
export declare function writeJanusConfig(settings: JanusSettings & { serverName?: string }): string;
export declare function startJanus(settings: JanusSettings & { timeoutMs?: number }): Promise<StartedJanus>;
export declare function stopJanus(pid: number, options?: { timeoutMs?: number }): Promise<boolean>;
export declare function janusAlive(pid: number): boolean;
export declare function janusLogTail(file: string, offset?: number, lines?: number): string;
