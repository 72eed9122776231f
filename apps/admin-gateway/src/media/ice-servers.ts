import { Inject, Injectable } from '@nestjs/common';
import { SERVICE_CONFIG } from '@switchboard/service-kit';
import type { SyncIceServer } from '@switchboard/contracts';
import { createHmac } from 'node:crypto';
import type { GatewayConfig } from '../config.js';

/**
 * The ICE servers a client gets at register: STUN as configured, TURN with a credential valid for
 * ICE_TURN_CREDENTIAL_TTL_SECONDS, computed as coturn's `use-auth-secret` (the TURN REST API) checks it.
 */
@Injectable()
export class IceServers {
  constructor(@Inject(SERVICE_CONFIG) private readonly config: GatewayConfig) {}

  forClient(clientId: string, now = Date.now()): SyncIceServer[] {
    const servers: SyncIceServer[] = [];
    const { iceStunUrls, iceTurnUrls, iceTurnSecret, iceTurnCredentialTtlSeconds } = this.config;
    if (iceStunUrls.length > 0) servers.push({ urls: [...iceStunUrls] });
    if (iceTurnUrls.length > 0 && iceTurnSecret) {
      const expiry = Math.floor(now / 1000) + iceTurnCredentialTtlSeconds;
      // The username names the client so a TURN server's logs tell whose relay it is.
      const username = `${expiry}:${clientId}`;
      const credential = createHmac('sha1', iceTurnSecret).update(username).digest('base64');
      servers.push({ urls: [...iceTurnUrls], username, credential });
    }
    return servers;
  }
}
