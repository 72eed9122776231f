import type { DemoRoomConfig } from './config.js';
import { idsOf, type TokenAsk } from './validation.js';

/** Interface B did not give a token: `status` is what the demo room answers (502, 503 or 504). */
export class UpstreamError extends Error {
  constructor(
    readonly status: 502 | 503 | 504,
    message: string,
  ) {
    super(message);
  }
}

type Fetch = typeof fetch;

/**
 * The operator's side of a token: the Token action of interface B (management-api) with the
 * backend's API key, for the application config of `applicationId` (found once, created if missing).
 */
export class TokenIssuer {
  private configId?: Promise<string>;

  constructor(
    private readonly config: Pick<DemoRoomConfig, 'managementUrl' | 'apiKey' | 'applicationId' | 'upstreamTimeoutMs'>,
    private readonly fetchImpl: Fetch = fetch,
  ) {}

  /** A register token for the asker's client, claiming the room's channel. */
  async token(ask: TokenAsk): Promise<{ token: string; userId: string; clientId: string }> {
    const ids = idsOf(ask.clientId);
    const configId = await this.applicationConfigId();
    const answer = await this.call<{ value: string }>('POST', `/ApplicationConfigs/${configId}/Token`, {
      ...ids,
      channelClaims: [{ id: ask.room }],
    });
    return { token: answer.value, userId: ids.userId, clientId: ids.clientId };
  }

  private applicationConfigId(): Promise<string> {
    this.configId ??= this.findOrCreateConfig().catch((error: unknown) => {
      this.configId = undefined; // asked again on the next token
      throw error;
    });
    return this.configId;
  }

  private async findOrCreateConfig(): Promise<string> {
    const filter = encodeURIComponent(`applicationId eq '${this.config.applicationId}'`);
    const found = await this.call<{ value: Array<{ id: string }> }>(
      'GET',
      `/ApplicationConfigs?$filter=${filter}&$select=id`,
    );
    if (found.value[0]) return found.value[0].id;
    const created = await this.call<{ id: string }>('POST', '/ApplicationConfigs', {
      applicationId: this.config.applicationId,
      tag: 'demo-room',
    });
    return created.id;
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { 'x-api-key': this.config.apiKey, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await this.fetchImpl(`${this.config.managementUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.config.upstreamTimeoutMs),
      });
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError';
      throw new UpstreamError(
        timedOut ? 504 : 503,
        `interface B (management-api) ${timedOut ? 'did not answer in time' : 'cannot be reached'}`,
      );
    }
    const text = await response.text();
    if (!response.ok) {
      // The OData error's code says why (e.g. Unauthorized: the backend's key); no more of it leaks.
      const code = (() => {
        try {
          return (JSON.parse(text) as { error?: { code?: string } }).error?.code;
        } catch {
          return undefined;
        }
      })();
      throw new UpstreamError(
        502,
        `interface B refused the token request: HTTP ${response.status} ${code ?? ''}`.trim(),
      );
    }
    return JSON.parse(text) as T;
  }
}
