/** Calls to interfaces A (`/api/a`) and B (`/api/b`) through the console's own origin. */
const KEY_STORAGE = 'switchboard.console.apiKey';
const BEARER_STORAGE = 'switchboard.console.bearer';

/** The signed-in credential: an API key, or an OAuth2 access token (sent as a bearer). */
export type Credential = { apiKey: string } | { bearer: string };

export function storedCredential(): Credential | null {
  const key = sessionStorage.getItem(KEY_STORAGE);
  if (key !== null) return { apiKey: key };
  const bearer = sessionStorage.getItem(BEARER_STORAGE);
  return bearer === null ? null : { bearer };
}
export function storeCredential(credential: Credential | null): void {
  sessionStorage.removeItem(KEY_STORAGE);
  sessionStorage.removeItem(BEARER_STORAGE);
  if (credential && 'apiKey' in credential) sessionStorage.setItem(KEY_STORAGE, credential.apiKey);
  else if (credential) sessionStorage.setItem(BEARER_STORAGE, credential.bearer);
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

export async function api<T>(
  method: string,
  path: string,
  body?: unknown,
  credential = storedCredential(),
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (credential && 'apiKey' in credential) headers['x-api-key'] = credential.apiKey;
  else if (credential) headers.authorization = `Bearer ${credential.bearer}`;
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
