// Types for apps.mjs (plain JavaScript so that it runs before `npm install`).

export declare const REPO_ROOT: string;

export interface App {
  dir: string;
  appDir: string;
  service: string;
  port: number;
  main: string;
  migrate: string | null;
  bootstrap: string | null;
}

export interface ScriptResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  output: string;
  ms: number;
}

export declare function serviceNode(root?: string): string;
export declare function discoverApps(root?: string): App[];
export declare function camelCase(name: string): string;
export declare function assertBuilt(root: string, file: string, what: string): void;
export declare function runNodeScript(
  script: string,
  options?: { env?: NodeJS.ProcessEnv; cwd?: string; logFile?: string; timeoutMs?: number },
): Promise<ScriptResult>;
export declare function runMigrations(
  apps: App[],
  options?: {
    root?: string;
    env?: NodeJS.ProcessEnv;
    logDir?: string;
    parallel?: boolean;
    onResult?: (app: App, result: ScriptResult) => void;
    unbuilt?: 'throw' | 'skip';
  },
): Promise<App[]>;
