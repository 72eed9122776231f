/**
 * Which addresses a webhook may target (the SSRF policy): what kind of address an IP address is,
 * and whether the operator's settings (`webhookTargetSettings`) allow that kind. webhook-worker
 * applies it to every address a target resolves to at each attempt; management-api to IP-literal
 * and `localhost` targets when a webhook is written.
 *
 * Ranges are ipaddr.js's (`range()`). IPv6 addresses that carry an IPv4 address (mapped,
 * IPv4-compatible, RFC 6145 translated, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4, Teredo) are
 * judged by the IPv4 address they carry; when they may carry several, by the least allowed.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { bool } from './settings.js';

export type AddressKind =
  'public' | 'metadata' | 'unspecified' | 'loopback' | 'private' | 'link-local' | 'cgnat' | 'multicast' | 'reserved';

/** Cloud metadata endpoints (AWS, GCP, Azure, Oracle; ECS task metadata; Alibaba; AWS over IPv6). */
const METADATA = new Set(
  ['169.254.169.254', '169.254.170.2', '100.100.100.200', 'fd00:ec2::254'].map((a) => bytesKey(ipaddr.parse(a))),
);

function bytesKey(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  return address.toByteArray().join('.');
}

/** ipaddr.js range names; a name not listed here is `public` (ordinary unicast, anycast services). */
const RANGE_KINDS: Readonly<Record<string, AddressKind>> = {
  unspecified: 'unspecified',
  loopback: 'loopback',
  private: 'private',
  uniqueLocal: 'private',
  linkLocal: 'link-local',
  carrierGradeNat: 'cgnat',
  multicast: 'multicast',
  broadcast: 'reserved',
  reserved: 'reserved',
  deprecatedSiteLocal: 'reserved',
  discard: 'reserved',
  benchmarking: 'reserved',
  deprecatedOrchid: 'reserved',
  orchid2: 'reserved',
  droneRemoteIdProtocolEntityTags: 'reserved',
  segmentRouting: 'reserved',
};

/** From least to most allowed: an address that may stand for several is judged by the first. */
const STRICTNESS: readonly AddressKind[] = [
  'metadata',
  'reserved',
  'multicast',
  'unspecified',
  'link-local',
  'cgnat',
  'private',
  'loopback',
  'public',
];

const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

function ipv4At(bytes: readonly number[], ...offsets: number[]): ipaddr.IPv4 {
  return new ipaddr.IPv4(offsets.map((i) => bytes[i]!));
}

/**
 * The IPv4 addresses an IPv6 address may stand for. NAT64 local-use prefixes (RFC 8215) may be
 * of any RFC 6052 length inside 64:ff9b:1::/48: each placement the length allows is a candidate.
 */
export function carriedIpv4(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const bytes = address.toByteArray();
  const last = ipv4At(bytes, 12, 13, 14, 15);
  // The ranges that embed an IPv4 address; every other range embeds none but the IPv4-compatible form.
  const range = address.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145') return [last];
  if (range === 'rfc6052') {
    if (address.match(NAT64_WELL_KNOWN)) return [last];
    // Prefix lengths 48, 56, 64 and 96 (RFC 6052 section 2.2: byte 8 is the reserved u octet).
    return [ipv4At(bytes, 6, 7, 9, 10), ipv4At(bytes, 7, 9, 10, 11), ipv4At(bytes, 9, 10, 11, 12), last];
  }
  if (range === '6to4') return [ipv4At(bytes, 2, 3, 4, 5)];
  if (range === 'teredo') {
    // Server address, then the client's, stored inverted (RFC 4380).
    const client = bytes.slice(12).map((b) => b ^ 0xff);
    return [ipv4At(bytes, 4, 5, 6, 7), new ipaddr.IPv4(client)];
  }
  // IPv4-compatible (::a.b.c.d, deprecated by RFC 4291), but not :: and ::1 themselves.
  return bytes.slice(0, 12).every((b) => b === 0) && range !== 'unspecified' && range !== 'loopback' ? [last] : [];
}

function ipv4Kind(address: ipaddr.IPv4): AddressKind {
  if (METADATA.has(bytesKey(address))) return 'metadata';
  return RANGE_KINDS[address.range()] ?? 'public';
}

function ipv6Kind(address: ipaddr.IPv6): AddressKind {
  if (METADATA.has(bytesKey(address))) return 'metadata';
  const carried = carriedIpv4(address);
  if (carried.length > 0) {
    // A NAT64 placement that does not apply reads zeros (0.0.0.0/8, never forwarded): not a candidate.
    const kinds = carried.map(ipv4Kind);
    const forwarded = kinds.filter((kind) => kind !== 'unspecified');
    return leastAllowed(forwarded.length > 0 ? forwarded : kinds);
  }
  const kind = RANGE_KINDS[address.range()];
  if (kind) return kind;
  // Outside 2000::/3 nothing is assigned for global unicast.
  return address.match(GLOBAL_UNICAST) ? 'public' : 'reserved';
}

function leastAllowed(kinds: AddressKind[]): AddressKind {
  return STRICTNESS.find((kind) => kinds.includes(kind)) ?? 'public';
}

const classified = new Map<string, AddressKind>();

/**
 * What kind of address `address` is (IPv4 or IPv6 text, brackets and zone id allowed). Anything unparseable is
 * `reserved`.
 */
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
  const bare = address.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return 'reserved';
  const parsed = ipaddr.parse(bare);
  return parsed.kind() === 'ipv4' ? ipv4Kind(parsed as ipaddr.IPv4) : ipv6Kind(parsed as ipaddr.IPv6);
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
      description:
        'Webhook URLs may target loopback addresses (127.0.0.0/8, ::1), and no other non-public kind; for tests and local development',
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
  if (isIP(host) || ipaddr.isValid(host)) return classifyAddress(host);
  const name = host.replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost') ? 'loopback' : undefined;
}
