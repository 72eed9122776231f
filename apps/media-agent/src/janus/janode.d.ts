// Types for the part of janode (1.8, ESM, JSDoc only) that janus-client.ts uses.
declare module 'janode' {
  import type { EventEmitter } from 'node:events';

  export interface JanodeServer {
    url: string;
    apisecret?: string;
  }

  export interface JanodeConfig {
    address: JanodeServer | JanodeServer[];
    /** Seconds between the attempts of one connect(); janus-client.ts retries itself. */
    retry_time_secs?: number;
    max_retries?: number;
    is_admin?: boolean;
  }

  /** The Janus `server_info` answer (the fields the agent reads). */
  export interface JanusServerInfo {
    name: string;
    version: number;
    version_string: string;
    'session-timeout': number;
    [field: string]: unknown;
  }

  export interface JanodeSession extends EventEmitter {
    readonly id: number;
    destroy(): Promise<void>;
  }

  export interface JanodeConnection extends EventEmitter {
    readonly id: number;
    getInfo(): Promise<JanusServerInfo>;
    /** A session; janode sends a keep-alive every `keepAliveSeconds` and destroys it when one fails. */
    create(keepAliveSeconds?: number): Promise<JanodeSession>;
    close(): Promise<void>;
    listSessions(): Promise<{ sessions: number[] }>;
  }

  const Janode: {
    connect(config: JanodeConfig): Promise<JanodeConnection>;
    Logger: { setLevel(level: 'none' | 'error' | 'warning' | 'info' | 'verbose' | 'debug'): string };
    EVENT: { CONNECTION_CLOSED: string; CONNECTION_ERROR: string; SESSION_DESTROYED: string };
  };
  export default Janode;
}
