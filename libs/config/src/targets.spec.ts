import ipaddr from 'ipaddr.js';
import { addressAllowed, carriedIpv4, classifyAddress, literalHostKind, type AddressKind } from './targets.js';

describe('classifyAddress', () => {
  const cases: Array<[string, AddressKind]> = [
    ['93.184.216.34', 'public'],
    ['8.8.8.8', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.254', 'cgnat'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['not an address', 'reserved'],
  ];
  it.each(cases)('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it('judges IPv6 addresses that carry an IPv4 address by that address', () => {
    expect(classifyAddress('::ffff:127.0.0.1')).toBe('loopback');
    expect(classifyAddress('::ffff:7f00:1')).toBe('loopback');
    expect(classifyAddress('::ffff:169.254.169.254')).toBe('metadata');
    expect(classifyAddress('::ffff:10.1.2.3')).toBe('private');
    expect(classifyAddress('64:ff9b::a9fe:a9fe')).toBe('metadata');
    expect(classifyAddress('2002:c0a8:0101::1')).toBe('private');
    expect(classifyAddress('::ffff:8.8.8.8')).toBe('public');
    const carried = (address: string) => carriedIpv4(ipaddr.IPv6.parse(address)).map(String);
    expect(carried('::ffff:7f00:1')).toEqual(['127.0.0.1']);
    expect(carried('2606:4700::1')).toEqual([]);
    expect(carried('::1')).toEqual([]);
    expect(carried('::')).toEqual([]);
    expect(classifyAddress('[::1]')).toBe('loopback');
    expect(classifyAddress('fe80::1%eth0')).toBe('link-local');
  });
});

describe('classifyAddress: every IPv6 form that carries an IPv4 address', () => {
  const cases: Array<[string, string, AddressKind]> = [
    ['IPv4-mapped', '::ffff:10.0.0.1', 'private'],
    ['IPv4-mapped, hex', '::ffff:a00:1', 'private'],
    ['IPv4-compatible', '::10.0.0.1', 'private'],
    ['IPv4-compatible, hex', '::a00:1', 'private'],
    ['IPv4-compatible loopback', '::127.0.0.1', 'loopback'],
    ['IPv4-compatible metadata', '::a9fe:a9fe', 'metadata'],
    ['IPv4-compatible public', '::808:808', 'public'],
    ['IPv4-translated (RFC 6145)', '::ffff:0:10.0.0.1', 'private'],
    ['IPv4-translated, hex', '::ffff:0:a00:1', 'private'],
    ['IPv4-translated public', '::ffff:0:808:808', 'public'],
    ['NAT64 well-known', '64:ff9b::10.0.0.1', 'private'],
    ['NAT64 well-known loopback', '64:ff9b::7f00:1', 'loopback'],
    ['NAT64 well-known public', '64:ff9b::808:808', 'public'],
    ['NAT64 local-use (RFC 8215)', '64:ff9b:1::a00:1', 'private'],
    ['NAT64 local-use metadata', '64:ff9b:1::a9fe:a9fe', 'metadata'],
    ['NAT64 local-use, /48 placement of 10.0.0.1', '64:ff9b:1:a00:1:808:808:808', 'private'],
    ['NAT64 local-use, /64 placement of 127.0.0.1', '64:ff9b:1:808:7f:0:108:808', 'loopback'],
    ['NAT64 local-use, prefix only', '64:ff9b:1::', 'unspecified'],
    ['NAT64 local-use public', '64:ff9b:1::5db8:d822', 'public'],
    ['6to4', '2002:a00:1::1', 'private'],
    ['6to4 metadata', '2002:a9fe:a9fe::', 'metadata'],
    ['6to4 public', '2002:808:808::1', 'public'],
    ['Teredo, private client', '2001:0:808:808:0:0:f5ff:fffe', 'private'],
    ['Teredo, loopback client', '2001:0:808:808::80ff:fffe', 'loopback'],
    ['Teredo, private server', '2001:0:a00:1::f7f7:f7f7', 'private'],
    ['Teredo, public both', '2001:0:808:808::f7f7:f7f7', 'public'],
  ];
  it.each(cases)('%s %s is %s', (_, address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
    expect(classifyAddress(`[${address}]`)).toBe(kind);
  });

  it('other IPv6 ranges: zone ids, unassigned space, special-purpose blocks', () => {
    expect(classifyAddress('fe80::1%eth0')).toBe('link-local');
    expect(classifyAddress('[fe80::1%25eth0]')).toBe('link-local');
    expect(classifyAddress('::ffff:127.0.0.1%1')).toBe('loopback');
    expect(classifyAddress('1::1')).toBe('reserved');
    expect(classifyAddress('5f00::1')).toBe('reserved');
    expect(classifyAddress('2001:2::1')).toBe('reserved');
    expect(classifyAddress('fec0::1')).toBe('reserved');
    expect(classifyAddress('100::1')).toBe('reserved');
    expect(classifyAddress('3fff::1')).toBe('reserved');
    expect(classifyAddress('fd00:ec2:0::254')).toBe('metadata');
    expect(classifyAddress('255.255.255.255')).toBe('reserved');
    expect(classifyAddress('2001:4860:4860::8888')).toBe('public');
  });
});

describe('addressAllowed', () => {
  const strict = { allowPrivate: false, allowLoopback: false };
  const loopback = { allowPrivate: false, allowLoopback: true };
  const open = { allowPrivate: true, allowLoopback: false };
  it('allows public addresses only by default', () => {
    expect(addressAllowed('public', strict)).toBe(true);
    for (const kind of [
      'loopback',
      'private',
      'link-local',
      'cgnat',
      'unspecified',
      'multicast',
      'reserved',
      'metadata',
    ] as const)
      expect(addressAllowed(kind, strict)).toBe(false);
  });
  it('WEBHOOK_ALLOW_LOOPBACK allows loopback and nothing else', () => {
    expect(addressAllowed('loopback', loopback)).toBe(true);
    expect(addressAllowed('private', loopback)).toBe(false);
    expect(addressAllowed('unspecified', loopback)).toBe(false);
  });
  it('WEBHOOK_ALLOW_PRIVATE_TARGETS allows every non-public kind except cloud metadata', () => {
    for (const kind of ['loopback', 'private', 'link-local', 'cgnat', 'unspecified', 'reserved'] as const)
      expect(addressAllowed(kind, open)).toBe(true);
    expect(addressAllowed('metadata', open)).toBe(false);
  });
});

describe('literalHostKind', () => {
  it('knows IP literals (brackets included) and localhost without DNS, and nothing else', () => {
    expect(literalHostKind('127.0.0.1')).toBe('loopback');
    expect(literalHostKind('[::1]')).toBe('loopback');
    expect(literalHostKind('[::ffff:a9fe:a9fe]')).toBe('metadata');
    expect(literalHostKind('10.1.2.3')).toBe('private');
    expect(literalHostKind('93.184.216.34')).toBe('public');
    expect(literalHostKind('localhost')).toBe('loopback');
    expect(literalHostKind('api.LOCALHOST')).toBe('loopback');
    expect(literalHostKind('localhost.')).toBe('loopback');
    expect(literalHostKind('localhost.example.com')).toBeUndefined();
    expect(literalHostKind('hooks.example.com')).toBeUndefined();
  });
  it.each([
    ['http://2130706433/', 'loopback'],
    ['http://0x7f.1/', 'loopback'],
    ['http://0177.0.0.1/', 'loopback'],
    ['http://0x7f000001/', 'loopback'],
    ['http://127.1/', 'loopback'],
    ['http://0/', 'unspecified'],
    ['http://0xa9fea9fe/', 'metadata'],
    ['http://012.0.0.1/', 'private'],
    ['http://[0:0:0:0:0:ffff:169.254.169.254]/', 'metadata'],
    ['http://[::10.0.0.1]/', 'private'],
    ['http://[::ffff:0:10.0.0.1]/', 'private'],
    ['http://[64:ff9b:1::a00:1]/', 'private'],
    ['http://[64:ff9b::127.0.0.1]/', 'loopback'],
    ['http://[2002:7f00:1::]/', 'loopback'],
    ['http://[::]/', 'unspecified'],
    ['http://[::1]:8080/', 'loopback'],
    ['http://[fd00:ec2::254]/', 'metadata'],
  ])('judges the host a URL parser gives for %s: %s', (url, kind) => {
    expect(literalHostKind(new URL(url).hostname)).toBe(kind);
  });

  it('takes the unnormalised spellings too', () => {
    expect(literalHostKind('0x7f.1')).toBe('loopback');
    expect(literalHostKind('2130706433')).toBe('loopback');
    expect(literalHostKind('[::ffff:0:10.0.0.1]')).toBe('private');
  });
});
