export interface SettingLike {
  readonly env: string;
  readonly description: string;
  readonly required: boolean;
  readonly sensitive: boolean;
  readonly documentedDefault: string | undefined;
}

export interface ServiceSettings {
  readonly service: string;
  readonly settings: Readonly<Record<string, SettingLike>>;
}

export interface DiscoveredService {
  readonly dir: string;
  readonly service: string;
  readonly port: number;
}

export interface ConfigRow {
  readonly env: string;
  readonly services: string[];
  readonly sensitive: boolean;
  readonly entries: { service: string; setting: SettingLike }[];
}

export const START_MARKER: string;
export const END_MARKER: string;
export function discoverServices(root: string): DiscoveredService[];
export function configRows(services: readonly ServiceSettings[]): ConfigRow[];
export function renderConfigTable(services: readonly ServiceSettings[]): string;
export function extractBlock(text: string): string | undefined;
export function replaceBlock(text: string, table: string): string;
export function blockMatches(text: string, table: string): boolean;
