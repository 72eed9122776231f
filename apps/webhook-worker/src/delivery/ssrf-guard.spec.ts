import { addressAllowed, classifyAddress, embeddedIpv4, TargetGuard, TargetRefused, TargetUnresolved, type AddressKind } from './ssrf-guard.js';

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

describe('TargetGuard', () => {
  const dns = (answers: Record<string, string[]>) => async (host: string) => {
    const list = answers[host];
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const resolver = dns({ 'hooks.example.test': ['93.184.216.34', '2606:4700::1'], 'mixed.example.test': ['93.184.216.34', '10.0.0.5'], 'local.example.test': ['127.0.0.1'] });

  it('answers the first address when every address is allowed', async () => {
    await expect(new TargetGuard({ allowPrivate: false, allowLoopback: false }, resolver).check('hooks.example.test')).resolves.toEqual({ address: '93.184.216.34', family: 4 });
  });

  it('refuses a name when any of its addresses is refused (no choosing the public one)', async () => {
    await expect(new TargetGuard({ allowPrivate: false, allowLoopback: false }, resolver).check('mixed.example.test')).rejects.toThrow(TargetRefused);
    await expect(new TargetGuard({ allowPrivate: false, allowLoopback: false }, resolver).check('mixed.example.test')).rejects.toThrow(/10\.0\.0\.5 \(private address\)/);
  });

  it('checks IP literals without DNS, brackets included', async () => {
    const guard = new TargetGuard({ allowPrivate: false, allowLoopback: true }, () => Promise.reject(new Error('no DNS for literals')));
    await expect(guard.check('127.0.0.1')).resolves.toEqual({ address: '127.0.0.1', family: 4 });
    await expect(guard.check('[::1]')).resolves.toEqual({ address: '::1', family: 6 });
    await expect(guard.check('169.254.169.254')).rejects.toThrow(/metadata/);
    await expect(guard.check('[::ffff:192.168.0.1]')).rejects.toThrow(/private/);
  });

  it('follows the loopback setting for names too', async () => {
    await expect(new TargetGuard({ allowPrivate: false, allowLoopback: false }, resolver).check('local.example.test')).rejects.toThrow(/loopback/);
    await expect(new TargetGuard({ allowPrivate: false, allowLoopback: true }, resolver).check('local.example.test')).resolves.toEqual({ address: '127.0.0.1', family: 4 });
  });

  it('an unknown name is a resolution failure, not a refusal', async () => {
    await expect(new TargetGuard({ allowPrivate: false, allowLoopback: false }, resolver).check('nope.example.test')).rejects.toThrow(TargetUnresolved);
  });
});
