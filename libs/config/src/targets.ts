/**
 * Which addresses a webhook may target (the SSRF policy): what kind of address an IP address is,
 * and whether the operator's settings (`webhookTargetSettings`) allow that kind. webhook-worker
 * applies it to every address a target resolves to at each attempt; management-api to IP-literal
 * and `localhost` targets when a webhook is written.
 *
 * IPv4-mapped (`::ffff:a.b.c.d`), NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`) addresses are judged
 * by the IPv4 address they carry.
 */
import { isIP } from 'node:net';
import { bool } from './settings.js';
import { addressInCidrs, parseCidr, type Cidr } from './cidr.js';

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

/** The operator's settings of the policy, the same in every service that applies it. */
export function webhookTargetSettings() {
  return {
    allowPrivateTargets: bool({
      env: 'WEBHOOK_ALLOW_PRIVATE_TARGETS',
      default: false,
      description:
        'Webhook URLs may target loopback, private (RFC 1918, fc00::/7), link-local, CGNAT or reserved addresses; cloud metadata addresses stay refused. management-api judges IP-literal and localhost URLs when written, webhook-worker every address a URL resolves to when it delivers',
    }),
    allowLoopback: bool({
      env: 'WEBHOOK_ALLOW_LOOPBACK',
      default: false,
      description: 'Webhook URLs may target loopback addresses (127.0.0.0/8, ::1), and no other non-public kind; for tests and local development',
    }),
  };
}

/**
 * The kind of address a URL's host names without DNS: an IP literal's, or loopback for
 * `localhost` and its subdomains (RFC 6761: they resolve to loopback). Undefined for any other
 * name: what it resolves to is known only when it is resolved.
 */
export function literalHostKind(hostname: string): AddressKind | undefined {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (isIP(host)) return classifyAddress(host);
  const name = host.replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost') ? 'loopback' : undefined;
}
