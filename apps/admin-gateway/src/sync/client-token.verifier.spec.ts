/**
 * The verifier against tokens written by LiveSwitch's own SDK (the contracts fixture): every one is
 * accepted, stripped signatures and the SDK's key bytes included; tampered ones are refused.
 */
import { SYNC_CLOSE_CODES, type ResolvedApplication } from '@switchboard/contracts';
import { liveSwitchTokenVectors, type LiveSwitchTokenVector } from '@switchboard/testing';
import type { GatewayConfig } from '../config.js';
import type { ApplicationSecrets } from './application-secrets.service.js';
import { ClientTokenVerifier } from './client-token.verifier.js';
import { syncRefusal } from './sync.errors.js';

const vectors = liveSwitchTokenVectors();

function verifierFor(vector: LiveSwitchTokenVector): ClientTokenVerifier {
  const application: ResolvedApplication = {
    applicationId: vector.applicationId,
    applicationConfigId: 'cfg',
    organizationId: 'org',
    sharedSecret: vector.sharedSecret,
    disabled: false,
  };
  const secrets = { resolve: async () => application, ageOf: () => 0 } as unknown as ApplicationSecrets;
  return new ClientTokenVerifier({ clientTokenClockSkewSeconds: 30 } as GatewayConfig, secrets);
}

describe('ClientTokenVerifier with LiveSwitch SDK tokens', () => {
  const realNow = Date.now;
  beforeEach(() => {
    // The vectors were written at fixed times; the verifier reads the clock through Date.now.
    Date.now = () => vectors[0]!.now + 2000;
  });
  afterEach(() => {
    Date.now = realNow;
  });

  it('covers stripped signatures and join tokens', () => {
    expect(vectors.filter((v) => v.signatureStripped).length).toBeGreaterThanOrEqual(5);
    expect(vectors.some((v) => v.type === 'join')).toBe(true);
  });

  it.each(vectors.map((v, i) => [`${i} ${v.name}`, v] as const))('accepts %s', async (_, vector) => {
    const verified = await verifierFor(vector).verify(vector.token, vector.type, {
      applicationId: vector.applicationId,
    });
    expect(verified.payload).toEqual(JSON.parse(Buffer.from(vector.token.split('.')[1]!, 'base64').toString('utf8')));
  });

  /** How the /sync edge answers the verifier's verdict on the token ('accepted': no refusal). */
  const refusalOf = async (vector: LiveSwitchTokenVector, token: string) =>
    syncRefusal(
      await verifierFor(vector)
        .verify(token, vector.type)
        .then(
          () => 'accepted',
          (e: unknown) => e,
        ),
    );
  const refusedAsInvalid = { body: { code: 'TokenInvalid' }, closeCode: SYNC_CLOSE_CODES.tokenInvalid };

  it('refuses a changed payload, a changed signature character and a stripped non-trailing character', async () => {
    for (const vector of [...vectors.filter((v) => v.signatureStripped).slice(0, 3), vectors[0]!]) {
      const [header, payload, signature] = vector.token.split('.') as [string, string, string];
      const changedPayload = Buffer.from(
        Buffer.from(payload, 'base64').toString('utf8').replace('"applicationId"', '"nbf":1,"applicationId"'),
        'utf8',
      ).toString('base64');
      expect(await refusalOf(vector, `${header}.${changedPayload}.${signature}`)).toMatchObject(refusedAsInvalid);
      const flipped = signature.slice(0, 10) + (signature[10] === 'x' ? 'y' : 'x') + signature.slice(11);
      expect(await refusalOf(vector, `${header}.${payload}.${flipped}`)).toMatchObject(refusedAsInvalid);
      expect(
        await refusalOf(vector, `${header}.${payload}.${signature.slice(0, 5)}${signature.slice(6)}`),
      ).toMatchObject(refusedAsInvalid);
      expect(await refusalOf(vector, `${header}.${payload}.${signature}AA`)).toMatchObject(refusedAsInvalid);
    }
  });
});
