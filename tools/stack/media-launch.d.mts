// Types for media-launch.mjs (plain JavaScript, like the rest of the launcher).
import type { MediaServerPair } from './media-servers.mjs';

export declare function startMediaServers<App extends { service: string; port: number }>(
  launcher: object,
  apps: App[],
  pairs: MediaServerPair[],
): Promise<(App & { mediaPair?: MediaServerPair })[]>;
