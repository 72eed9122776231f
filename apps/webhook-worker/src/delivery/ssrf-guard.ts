/**
 * SSRF guard: which addresses a webhook may be delivered to.
 *
 * The target host is resolved once per attempt (every address, `dns.lookup` with `all`); when ANY of
 * them is refused the attempt is refused (a host that mixes public and private addresses is not
 * something a customer endpoint needs), otherwise the first address is the one connected to: the
 * HTTP client gets a `lookup` that answers that very address, so a second DNS answer (rebinding)
 * cannot redirect the connection. The request keeps the URL's host in `Host` and in TLS SNI.
 *
 * IPv4-mapped (`::ffff:a.b.c.d`), NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`) addresses are judged
 * by the IPv4 address they carry.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { addressInCidrs, parseCidr, type Cidr } from '@switchboard/config';

export type AddressKind = 'public' | 'metadata' | 'unspecified' | 'loopback' | 'private' | 'link-local' | 'cgnat' | 'multicast' | 'reserved';

/** First match wins: metadata addresses sit inside link-local, private and CGNAT ranges. */
const RANGES: ReadonlyArray<readonly [AddressKind, readonly string[]]> = [
  ['metadata', ['169.254.169.254/32', '169.254.170.2/32', '100.100.100.200/32', 'fd00:ec2::254/128']],
  ['unspecified', ['0.0.0.0/8', '::/128']],
  ['loopback', ['127.0.0.0/8', '::1/128']],
  ['private', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7']],
  ['link-local', ['169.254.0.0/16', 'fe80::/10']],
  ['cgnat', ['100.64.0.0/10']],
  ['multicast', ['224.0.0.0/4', 'ff00::/8']],
  [
    'reserved',
    [
      '192.0.0.0/24',
      '192.0.2.0/24',
      '198.18.0.0/15',
      '198.51.100.0/24',
      '203.0.113.0/24',
      '240.0.0.0/4',
      '100::/64',
      '2001:db8::/32',
      '2001::/23',
      'fec0::/10',
    ],
  ],
];

const BLOCKS: ReadonlyArray<readonly [AddressKind, Cidr[]]> = RANGES.map(([kind, list]) => [kind, list.map((c) => parseCidr(c)!)] as const);

const MAPPED = parseCidr('::ffff:0:0/96')!;
const NAT64 = parseCidr('64:ff9b::/96')!;
const SIX_TO_FOUR = parseCidr('2002::/16')!;

function inBlock(bits: bigint, block: Cidr, width: bigint): boolean {
  const shift = width - BigInt(block.prefix);
  return bits >> shift === block.bits >> shift;
}

function ipv4Text(n: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 0xffn)).join('.');
}

/** The IPv4 address an IPv6 address stands for (mapped, NAT64, 6to4), if any. */
export function embeddedIpv4(address: string): string | undefined {
  if (isIP(address) !== 6) return undefined;
  const cidr = parseCidr(address);
  if (!cidr) return undefined;
  if (inBlock(cidr.bits, MAPPED, 128n) || inBlock(cidr.bits, NAT64, 128n)) return ipv4Text(cidr.bits & 0xffffffffn);
  if (inBlock(cidr.bits, SIX_TO_FOUR, 128n)) return ipv4Text((cidr.bits >> 80n) & 0xffffffffn);
  return undefined;
}

const classified = new Map<string, AddressKind>();

/** What kind of address `address` is (IPv4 or IPv6 text). Anything unparseable is `reserved`. */
export function classifyAddress(address: string): AddressKind {
  let kind = classified.get(address);
  if (kind === undefined) {
    kind = classify(address);
    if (classified.size >= 10_000) classified.clear();
    classified.set(address, kind);
  }
  return kind;
}

function classify(address: string): AddressKind {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const v4 = embeddedIpv4(bare);
  const target = v4 ?? bare;
  if (!isIP(target)) return 'reserved';
  for (const [kind, blocks] of BLOCKS) {
    if (addressInCidrs(target, blocks)) return kind;
  }
  return 'public';
}

export interface TargetPolicy {
  /** Loopback, private, link-local, CGNAT, unspecified, multicast and reserved addresses. Never metadata. */
  allowPrivate: boolean;
  /** Loopback addresses only. */
  allowLoopback: boolean;
}

export function addressAllowed(kind: AddressKind, policy: TargetPolicy): boolean {
  if (kind === 'public') return true;
  if (kind === 'metadata') return false;
  if (policy.allowPrivate) return true;
  return kind === 'loopback' && policy.allowLoopback;
}

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
        throw new TargetUnresolved(`cannot resolve ${host}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
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
