/** Calls to interfaces A (`/api/a`) and B (`/api/b`) through the console's own origin. */
const KEY_STORAGE = 'switchboard.console.apiKey';

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY_STORAGE);
}
export function storeKey(key: string | null): void {
  if (key === null) sessionStorage.removeItem(KEY_STORAGE);
  else sessionStorage.setItem(KEY_STORAGE, key);
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The readable part of a Problem body (interface A) or an OData error body (interface B). */
function errorText(status: number, body: unknown): string {
  const problem = body as { detail?: string; title?: string; error?: { message?: string } } | undefined;
  return problem?.detail ?? problem?.error?.message ?? problem?.title ?? `HTTP ${status}`;
}

export async function api<T>(method: string, path: string, body?: unknown, key = storedKey()): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (key) headers['x-api-key'] = key;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  const parsed: unknown = text ? JSON.parse(text) : undefined;
  if (!response.ok) throw new ApiError(response.status, errorText(response.status, parsed));
  return parsed as T;
}

/** A path segment: ids from the APIs may hold any character. */
export const seg = (id: string) => encodeURIComponent(id);

/** An OData string literal (quotes doubled). */
export const odataString = (text: string) => `'${text.replaceAll("'", "''")}'`;

export const channelPath = (applicationId: string, channelId: string) =>
  `/api/a/applications/${seg(applicationId)}/channels/${seg(channelId)}`;

export interface ClientRef {
  userId: string;
  deviceId: string;
  clientId: string;
}
export const clientInChannelPath = (applicationId: string, channelId: string, c: ClientRef) =>
  `${channelPath(applicationId, channelId)}/users/${seg(c.userId)}/devices/${seg(c.deviceId)}/clients/${seg(c.clientId)}`;
