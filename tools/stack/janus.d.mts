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
export declare function writeJanusConfig(
  settings: JanusSettings & { serverName?: string; natMapping?: string },
): string;
export declare function startJanus(
  settings: JanusSettings & { timeoutMs?: number; logFile?: string },
): Promise<StartedJanus>;
export declare function stopJanus(pid: number, options?: { timeoutMs?: number }): Promise<boolean>;
export declare function janusAlive(pid: number): boolean;
export declare function janusLogTail(file: string, offset?: number, lines?: number): string;
export declare function ensureJanus(options?: { install?: boolean; log?: (message: string) => void }): {
  bin: string | null;
  reason?: string;
};
export declare const STACK_JANUS_PORTS: Readonly<{ ws: number; admin: number }>;
export declare const STACK_RTP_PORT_RANGE: string;
export declare function isStackJanus(pid: number, dataDir: string): boolean;
export declare function startStackJanus(options: {
  dataDir: string;
  secrets: Record<string, string>;
  previousPid?: number;
  logFile?: string;
  wsPort?: number;
  adminPort?: number;
  rtpPortRange?: string;
  agentDataDir?: string;
  label?: string;
}): Promise<{ pid: number; wsUrl: string; env: Record<string, string> }>;
export declare function newJanusSecrets(): { JANUS_ADMIN_SECRET: string; JANUS_ROOM_ADMIN_KEY: string };
