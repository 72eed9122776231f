// Client tokens: from the management API (`POST /ApplicationConfigs/{id}/Token`), or signed locally
// with a known shared secret (tests and benchmarks without management-api).
import { createHmac } from 'node:crypto';

const b64 = (value) => Buffer.from(value).toString('base64');

/** HS256 client token, standard padded Base64 (http-contract.md, "Client edge"). */
export function signClientToken(payload, sharedSecret) {
  const signingInput = `${b64(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64(JSON.stringify(payload))}`;
  return `${signingInput}.${createHmac('sha256', Buffer.from(sharedSecret, 'utf8')).update(signingInput, 'ascii').digest('base64')}`;
}

export class ManagementClient {
  constructor({ url, apiKey, timeoutMs = 15000 }) {
    this.url = url.replace(/\/+$/, '');
    this.apiKey = apiKey;
    this.timeoutMs = timeoutMs;
  }

  async call(method, path, body) {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: { 'X-API-Key': this.apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await res.text();
    const parsed = text ? JSON.parse(text) : undefined;
    if (!res.ok) {
      const error = new Error(
        `${method} ${path}: HTTP ${res.status} ${parsed?.error?.code ?? ''} ${parsed?.error?.message ?? text}`.trim(),
      );
      error.status = res.status;
      throw error;
    }
    return parsed;
  }

  /** The config of `applicationId` (reused when the caller's organization has it, created otherwise). */
  async ensureApplication(applicationId, { tag = 'simulator' } = {}) {
    const filter = encodeURIComponent(`applicationId eq '${applicationId.replace(/'/g, "''")}'`);
    const found = await this.call('GET', `/ApplicationConfigs?$filter=${filter}`);
    const existing = found?.value?.[0];
    if (existing) return { applicationConfigId: existing.id, applicationId, created: false };
    const created = await this.call('POST', '/ApplicationConfigs', { applicationId, tag });
    return { applicationConfigId: created.id, applicationId, created: true };
  }

  async token(applicationConfigId, claims) {
    const answer = await this.call(
      'POST',
      `/ApplicationConfigs/${encodeURIComponent(applicationConfigId)}/Token`,
      claims,
    );
    return answer.value;
  }
}

/**
 * Makes tokens for simulated clients: through the management API when `management` is given,
 * otherwise signed locally with `sharedSecret`.
 */
export class TokenSource {
  constructor({ management, applicationConfigId, applicationId, sharedSecret, ttlSeconds = 3600 }) {
    this.management = management;
    this.applicationConfigId = applicationConfigId;
    this.applicationId = applicationId;
    this.sharedSecret = sharedSecret;
    this.ttlSeconds = ttlSeconds;
  }

  async token({ userId, deviceId, clientId, clientRoles, channelIds }) {
    const channelClaims = channelIds.map((id) => ({ id }));
    if (this.management)
      return this.management.token(this.applicationConfigId, {
        userId,
        deviceId,
        clientId,
        clientRoles,
        channelClaims,
      });
    const iat = Math.floor(Date.now() / 1000);
    return signClientToken(
      {
        iat,
        exp: iat + this.ttlSeconds,
        type: 'register',
        applicationId: this.applicationId,
        userId,
        deviceId,
        clientId,
        clientRoles,
        channels: channelClaims,
      },
      this.sharedSecret,
    );
  }
}
