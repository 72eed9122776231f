import type { DomainError } from '@switchboard/contracts';
import type { JsonLogger, NatsClient, ReadinessService } from '@switchboard/service-kit';
import type { GatewayConfig } from '../config.js';
import { CredentialsService } from './credentials.service.js';

const KEY = 'sb_customer-key-value-123';
const ORG = 'org-customer';

/** management-api's verdicts, switchable by the test; each request can be held until released. */
function fakeManagement() {
  const state = { disabled: false, asked: 0, hold: undefined as Promise<void> | undefined };
  const nats = {
    request: async () => {
      state.asked++;
      const answer = state.disabled
        ? { valid: false, organizationDisabled: true, organizationId: ORG }
        : { valid: true, keyId: 'key-1', organizationId: ORG, operator: false };
      await state.hold;
      return answer;
    },
  } as unknown as NatsClient;
  return { state, nats };
}

function credentials(nats: NatsClient) {
  const config = { apiKeyCacheTtlMs: 300_000, apiKeyNegativeCacheTtlMs: 2000 } as GatewayConfig;
  return new CredentialsService(config, nats, {} as ReadinessService, {} as JsonLogger);
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (e) {
    return (e as DomainError).code;
  }
}

describe('CredentialsService and organization notices', () => {
  it('refuses a key of a disabled organization with Forbidden, remembers it, and forgets both verdicts on the notice', async () => {
    const { state, nats } = fakeManagement();
    const service = credentials(nats);
    expect(await codeOf(service.fromApiKey(KEY))).toBe('ok');
    state.disabled = true;
    // Remembered: the change is not seen until the notice.
    expect(service.cachedApiKey(KEY)?.organizationId).toBe(ORG);
    service.forgetOrganization('org-other');
    expect(service.cachedApiKey(KEY)).toBeDefined();
    service.forgetOrganization(ORG);
    expect(service.cachedApiKey(KEY)).toBeUndefined();
    expect(await codeOf(service.fromApiKey(KEY))).toBe('Forbidden');
    expect(() => service.cachedApiKey(KEY)).toThrow(expect.objectContaining({ code: 'Forbidden' }));
    expect(state.asked).toBe(2);
    state.disabled = false;
    service.forgetOrganization(ORG);
    expect(await codeOf(service.fromApiKey(KEY))).toBe('ok');
  });

  it('does not keep a verdict asked for before a notice that arrived while it was on its way', async () => {
    const { state, nats } = fakeManagement();
    const service = credentials(nats);
    let release!: () => void;
    state.hold = new Promise((resolve) => (release = resolve));
    const pending = service.fromApiKey(KEY);
    service.forgetOrganization(ORG);
    release();
    expect(await codeOf(pending)).toBe('ok');
    expect(service.cachedApiKey(KEY)).toBeUndefined();
  });
});
