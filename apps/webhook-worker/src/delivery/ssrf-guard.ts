/**
 * SSRF guard: which addresses a webhook may be delivered to.
 *
 * The target host is resolved once per attempt (every address, `dns.lookup` with `all`); when ANY of
 * them is refused the attempt is refused (a host that mixes public and private addresses is not
 * something a customer endpoint needs), otherwise the first address is the one connected to: the
 * HTTP client gets a `lookup` that answers that very address, so a second DNS answer (rebinding)
 * cannot redirect the connection. The request keeps the URL's host in `Host` and in TLS SNI.
 * Addresses are judged by the policy of `@switchboard/config` (classifyAddress, addressAllowed).
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { addressAllowed, classifyAddress, type TargetPolicy } from '@switchboard/config';

/** The target was refused by policy (not retried). */
export class TargetRefused extends Error {
  override readonly name = 'TargetRefused';
}

/** The host name could not be resolved (a network error: retried for reliable webhooks). */
export class TargetUnresolved extends Error {
  override readonly name = 'TargetUnresolved';
}

export interface ResolvedTarget {
  address: string;
  family: 4 | 6;
}

export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

export class TargetGuard {
  constructor(
    private readonly policy: TargetPolicy,
    private readonly resolve: Resolver = systemResolver,
  ) {}

  /** Resolves `hostname` (a name or an IP literal, brackets allowed) and checks every address. */
  async check(hostname: string): Promise<ResolvedTarget> {
    const host = hostname.replace(/^\[|\]$/g, '');
    let addresses: Array<{ address: string; family: number }>;
    if (isIP(host)) {
      addresses = [{ address: host, family: isIP(host) }];
    } else {
      try {
        addresses = await this.resolve(host);
      } catch (e) {
        throw new TargetUnresolved(
          `cannot resolve ${host}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
        );
      }
      if (addresses.length === 0) throw new TargetUnresolved(`cannot resolve ${host}: no address`);
    }
    for (const a of addresses) {
      const kind = classifyAddress(a.address);
      if (!addressAllowed(kind, this.policy)) {
        throw new TargetRefused(`target refused: ${host} resolves to ${a.address} (${kind} address)`);
      }
    }
    const first = addresses[0]!;
    return { address: first.address, family: first.family === 6 ? 6 : 4 };
  }
}
