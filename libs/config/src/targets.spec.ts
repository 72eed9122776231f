import { addressAllowed, classifyAddress, embeddedIpv4, literalHostKind, type AddressKind } from './targets.js';

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
    expect(embeddedIpv4('::ffff:7f00:1')).toBe('127.0.0.1');
    expect(embeddedIpv4('2606:4700::1')).toBeUndefined();
    expect(classifyAddress('[::1]')).toBe('loopback');
    expect(classifyAddress('fe80::1%eth0')).toBe('link-local');
  });
});

describe('addressAllowed', () => {
  const strict = { allowPrivate: false, allowLoopback: false };
  const loopback = { allowPrivate: false, allowLoopback: true };
  const open = { allowPrivate: true, allowLoopback: false };
  it('allows public addresses only by default', () => {
    expect(addressAllowed('public', strict)).toBe(true);
    for (const kind of ['loopback', 'private', 'link-local', 'cgnat', 'unspecified', 'multicast', 'reserved', 'metadata'] as const) expect(addressAllowed(kind, strict)).toBe(false);
  });
  it('WEBHOOK_ALLOW_LOOPBACK allows loopback and nothing else', () => {
    expect(addressAllowed('loopback', loopback)).toBe(true);
    expect(addressAllowed('private', loopback)).toBe(false);
    expect(addressAllowed('unspecified', loopback)).toBe(false);
  });
  it('WEBHOOK_ALLOW_PRIVATE_TARGETS allows every non-public kind except cloud metadata', () => {
    for (const kind of ['loopback', 'private', 'link-local', 'cgnat', 'unspecified', 'reserved'] as const) expect(addressAllowed(kind, open)).toBe(true);
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
  it('judges the host a URL parser gives for other spellings of an address', () => {
    expect(literalHostKind(new URL('http://2130706433/').hostname)).toBe('loopback');
    expect(literalHostKind(new URL('http://0x7f.1/').hostname)).toBe('loopback');
    expect(literalHostKind(new URL('http://[0:0:0:0:0:ffff:169.254.169.254]/').hostname)).toBe('metadata');
  });
});
