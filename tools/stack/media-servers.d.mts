// Types for media-servers.mjs (plain JavaScript, like the rest of the launcher).

export interface MediaServerPair {
  number: number;
  janusName: string;
  agentService: string;
  wsPort: number;
  adminPort: number;
  rtpPortRange: string;
  agentPort: number;
  janusDataDir: string;
  agentDataDir: string;
  janusLog: string;
}

export declare const MEDIA_SERVERS_FLAG: string;
export declare const MEDIA_SERVERS_SETTING: string;
export declare const MAX_MEDIA_SERVERS: number;
export declare function parseMediaServerCount(text: unknown, source: string): number;
export declare function parseStartOptions(
  args: string[],
  env?: Record<string, string | undefined>,
): { serversOnly: boolean; mediaServers: number };
export declare function mediaServerPairs(
  count: number,
  options: { stackDir: string; logsDir: string; agentPort: number; servicePorts?: number[] },
): MediaServerPair[];
export declare function janusNumber(name: string): number | null;
export declare function appServiceOf(name: string): string;
export declare function janusDataDir(stackDir: string, number: number): string;
export declare function janusLabel(number: number): string;
export declare function mediaAgentEnv(
  janusEnv: Record<string, string>,
  pairCount: number,
  env?: Record<string, string | undefined>,
): Record<string, string | undefined>;
