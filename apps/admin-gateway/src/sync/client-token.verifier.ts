import { Inject, Injectable } from '@nestjs/common';
import {
  checkClientTokenTimes,
  ClientTokenError,
  clientTokenSignatureValid,
  decodeClientToken,
  DomainError,
  type ClientTokenPayload,
  type ClientTokenType,
  type ResolvedApplication,
} from '@switchboard/contracts';
import { SERVICE_CONFIG } from '@switchboard/service-kit';
import type { GatewayConfig } from '../config.js';
import { ApplicationSecrets } from './application-secrets.service.js';

export interface VerifiedToken {
  payload: ClientTokenPayload;
  application: ResolvedApplication;
}

/**
 * A cached secret older than this is fetched again once when a signature does not match (secret rotated, change event
 * missed).
 */
const REFETCH_AFTER_MS = 1000;

/**
 * Verifies client tokens: shape and payload, HS256 signature with the application's shared
 * secret, `exp`/`iat` with the configured clock skew. Failures are DomainErrors whose codes close the
 * socket (sync.errors.ts); management-api unreachable or slow is no verdict on the token and closes nothing.
 */
@Injectable()
export class ClientTokenVerifier {
  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: GatewayConfig,
    private readonly secrets: ApplicationSecrets,
  ) {}

  async verify(token: string, type: ClientTokenType, options: { applicationId?: string } = {}): Promise<VerifiedToken> {
    let decoded;
    try {
      decoded = decodeClientToken(token);
    } catch (e) {
      if (e instanceof ClientTokenError) throw new DomainError('TokenInvalid', e.message, e.details);
      throw e;
    }
    const payload = decoded.payload;
    if (payload.type !== type)
      throw new DomainError('TokenInvalid', `A token of type ${type} is required here (got ${payload.type}).`, [
        { field: 'type', message: `must be ${type}` },
      ]);
    if (options.applicationId !== undefined && payload.applicationId !== options.applicationId) {
      throw new DomainError(
        'ApplicationRefused',
        `The token is for another application than ${options.applicationId}.`,
        [{ field: 'applicationId', message: 'does not match' }],
      );
    }

    let application = await this.lookup(payload.applicationId);
    if (!clientTokenSignatureValid(decoded, application.sharedSecret)) {
      const age = this.secrets.ageOf(payload.applicationId);
      if (age !== undefined && age > REFETCH_AFTER_MS) application = await this.lookup(payload.applicationId, 0);
      if (!clientTokenSignatureValid(decoded, application.sharedSecret))
        throw new DomainError(
          'TokenInvalid',
          'The token signature does not match: tampered, or signed with another secret.',
        );
    }
    if (application.disabled)
      throw new DomainError('ApplicationRefused', `The application ${payload.applicationId} is disabled.`);
    if (application.organizationDisabled)
      throw new DomainError(
        'ApplicationRefused',
        `The organization of the application ${payload.applicationId} is disabled.`,
      );
    try {
      checkClientTokenTimes(payload, Math.floor(Date.now() / 1000), this.config.clientTokenClockSkewSeconds);
    } catch (e) {
      if (e instanceof ClientTokenError)
        throw new DomainError(e.reason === 'invalid-payload' ? 'TokenInvalid' : 'TokenExpired', e.message, e.details);
      throw e;
    }
    return { payload, application };
  }

  private async lookup(applicationId: string, maxAgeMs?: number): Promise<ResolvedApplication> {
    try {
      return await this.secrets.resolve(applicationId, maxAgeMs);
    } catch (e) {
      if (e instanceof DomainError && e.code === 'NotFound')
        throw new DomainError('ApplicationRefused', `The application ${applicationId} is not known.`);
      // Management API down or slow: the client may retry; the socket stays open.
      throw e;
    }
  }
}
