import { Inject, Injectable } from '@nestjs/common';
import {
  checkClientTokenTimes,
  ClientTokenError,
  clientTokenSignatureValid,
  decodeClientToken,
  DomainError,
  SYNC_CLOSE_CODES,
  type ClientTokenPayload,
  type ClientTokenType,
  type ResolvedApplication,
} from '@switchboard/contracts';
import { SERVICE_CONFIG } from '@switchboard/service-kit';
import type { GatewayConfig } from '../config.js';
import { ApplicationSecrets } from './application-secrets.service.js';
import { SyncError } from './sync.errors.js';

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
 * secret, `exp`/`iat` with the configured clock skew. Failures are SyncErrors carrying the close
 * code of the failure (4001 invalid, 4002 expired, 4003 application): the contract refuses an
 * expired, tampered or wrong-application token with an error frame and closes the socket, at
 * `register` and at `join` alike. management-api unreachable or slow is no verdict on the token:
 * that error closes nothing (the client may retry).
 */
@Injectable()
export class ClientTokenVerifier {
  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: GatewayConfig,
    private readonly secrets: ApplicationSecrets,
  ) {}

  async verify(token: string, type: ClientTokenType, options: { applicationId?: string } = {}): Promise<VerifiedToken> {
    const fail = (
      code: 'TokenInvalid' | 'TokenExpired' | 'ApplicationRefused',
      message: string,
      details: Array<{ field?: string; message: string }> = [],
    ) =>
      new SyncError(
        code,
        message,
        details,
        code === 'TokenInvalid'
          ? SYNC_CLOSE_CODES.tokenInvalid
          : code === 'TokenExpired'
            ? SYNC_CLOSE_CODES.tokenExpired
            : SYNC_CLOSE_CODES.applicationRefused,
      );

    let decoded;
    try {
      decoded = decodeClientToken(token);
    } catch (e) {
      if (e instanceof ClientTokenError) throw fail('TokenInvalid', e.message, e.details);
      throw e;
    }
    const payload = decoded.payload;
    if (payload.type !== type)
      throw fail('TokenInvalid', `A token of type ${type} is required here (got ${payload.type}).`, [
        { field: 'type', message: `must be ${type}` },
      ]);
    if (options.applicationId !== undefined && payload.applicationId !== options.applicationId) {
      throw fail('ApplicationRefused', `The token is for another application than ${options.applicationId}.`, [
        { field: 'applicationId', message: 'does not match' },
      ]);
    }

    let application = await this.lookup(payload.applicationId, fail);
    if (!clientTokenSignatureValid(decoded, application.sharedSecret)) {
      const age = this.secrets.ageOf(payload.applicationId);
      if (age !== undefined && age > REFETCH_AFTER_MS) application = await this.lookup(payload.applicationId, fail, 0);
      if (!clientTokenSignatureValid(decoded, application.sharedSecret))
        throw fail('TokenInvalid', 'The token signature does not match: tampered, or signed with another secret.');
    }
    if (application.disabled) throw fail('ApplicationRefused', `The application ${payload.applicationId} is disabled.`);
    if (application.organizationDisabled)
      throw fail('ApplicationRefused', `The organization of the application ${payload.applicationId} is disabled.`);
    try {
      checkClientTokenTimes(payload, Math.floor(Date.now() / 1000), this.config.clientTokenClockSkewSeconds);
    } catch (e) {
      if (e instanceof ClientTokenError)
        throw fail(e.reason === 'invalid-payload' ? 'TokenInvalid' : 'TokenExpired', e.message, e.details);
      throw e;
    }
    return { payload, application };
  }

  private async lookup(
    applicationId: string,
    fail: (code: 'ApplicationRefused', message: string) => SyncError,
    maxAgeMs?: number,
  ): Promise<ResolvedApplication> {
    try {
      return await this.secrets.resolve(applicationId, maxAgeMs);
    } catch (e) {
      if (e instanceof DomainError && e.code === 'NotFound')
        throw fail('ApplicationRefused', `The application ${applicationId} is not known.`);
      // Management API down or slow: the client may retry; the socket stays open.
      throw SyncError.from(e);
    }
  }
}
