import { TargetGuard, TargetRefused, TargetUnresolved } from './ssrf-guard.js';

describe('TargetGuard', () => {
  const dns = (answers: Record<string, string[]>) => async (host: string) => {
    const list = answers[host];
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const resolver = dns({
    'hooks.example.test': ['93.184.216.34', '2606:4700::1'],
    'mixed.example.test': ['93.184.216.34', '10.0.0.5'],
    'local.example.test': ['127.0.0.1'],
  });

  it('answers the first address when every address is allowed', async () => {
    await expect(
      new TargetGuard({ allowPrivate: false, allowLoopback: false }, resolver).check('hooks.example.test'),
    ).resolves.toEqual({ address: '93.184.216.34', family: 4 });
  });

  it('refuses a name when any of its addresses is refused (no choosing the public one)', async () => {
    await expect(
      new TargetGuard({ allowPrivate: false, allowLoopback: false }, resolver).check('mixed.example.test'),
    ).rejects.toThrow(TargetRefused);
    await expect(
      new TargetGuard({ allowPrivate: false, allowLoopback: false }, resolver).check('mixed.example.test'),
    ).rejects.toThrow(/10\.0\.0\.5 \(private address\)/);
  });

  it('checks IP literals without DNS, brackets included', async () => {
    const guard = new TargetGuard({ allowPrivate: false, allowLoopback: true }, () =>
      Promise.reject(new Error('no DNS for literals')),
    );
    await expect(guard.check('127.0.0.1')).resolves.toEqual({ address: '127.0.0.1', family: 4 });
    await expect(guard.check('[::1]')).resolves.toEqual({ address: '::1', family: 6 });
    await expect(guard.check('169.254.169.254')).rejects.toThrow(/metadata/);
    await expect(guard.check('[::ffff:192.168.0.1]')).rejects.toThrow(/private/);
  });

  it('follows the loopback setting for names too', async () => {
    await expect(
      new TargetGuard({ allowPrivate: false, allowLoopback: false }, resolver).check('local.example.test'),
    ).rejects.toThrow(/loopback/);
    await expect(
      new TargetGuard({ allowPrivate: false, allowLoopback: true }, resolver).check('local.example.test'),
    ).resolves.toEqual({ address: '127.0.0.1', family: 4 });
  });

  it('an unknown name is a resolution failure, not a refusal', async () => {
    await expect(
      new TargetGuard({ allowPrivate: false, allowLoopback: false }, resolver).check('nope.example.test'),
    ).rejects.toThrow(TargetUnresolved);
  });

  describe('IPv6 forms that carry an IPv4 address, resolved by DNS or written as literals', () => {
    const forms: Array<[string, string]> = [
      ['::10.0.0.1', 'private'],
      ['::a00:1', 'private'],
      ['::ffff:10.0.0.1', 'private'],
      ['::ffff:0:a00:1', 'private'],
      ['64:ff9b::a00:1', 'private'],
      ['64:ff9b:1::a00:1', 'private'],
      ['2002:a00:1::1', 'private'],
      ['2001:0:808:808::f5ff:fffe', 'private'],
      ['::ffff:0:a9fe:a9fe', 'metadata'],
      ['64:ff9b:1::a9fe:a9fe', 'metadata'],
      ['::7f00:1', 'loopback'],
      ['fe80::1%eth0', 'link-local'],
      ['::', 'unspecified'],
    ];
    const names = Object.fromEntries(
      forms.map(([address], i) => [`form-${i}.example.test`, ['93.184.216.34', address]]),
    );
    const strict = new TargetGuard({ allowPrivate: false, allowLoopback: false }, dns(names));

    it.each(forms.map(([address, kind], i) => [address, kind, i] as const))(
      'refuses %s (%s) after resolution and as a literal',
      async (address, kind, i) => {
        await expect(strict.check(`form-${i}.example.test`)).rejects.toThrow(new RegExp(`\\(${kind} address\\)`));
        await expect(strict.check(`[${address}]`)).rejects.toThrow(TargetRefused);
      },
    );

    it('keeps the settings: loopback forms pass with WEBHOOK_ALLOW_LOOPBACK, private ones with WEBHOOK_ALLOW_PRIVATE_TARGETS, metadata never', async () => {
      const loopback = new TargetGuard(
        { allowPrivate: false, allowLoopback: true },
        dns({ 'loop.example.test': ['::ffff:127.0.0.1', '64:ff9b::7f00:1'] }),
      );
      await expect(loopback.check('loop.example.test')).resolves.toEqual({ address: '::ffff:127.0.0.1', family: 6 });
      await expect(loopback.check('[::ffff:0:a00:1]')).rejects.toThrow(/private/);
      const open = new TargetGuard({ allowPrivate: true, allowLoopback: false }, dns(names));
      await expect(open.check('[64:ff9b:1::a00:1]')).resolves.toEqual({ address: '64:ff9b:1::a00:1', family: 6 });
      await expect(open.check('[::ffff:0:a9fe:a9fe]')).rejects.toThrow(/metadata/);
    });

    it('lets public IPv4 through in the same forms', async () => {
      const guard = new TargetGuard(
        { allowPrivate: false, allowLoopback: false },
        dns({ 'nat64.example.test': ['64:ff9b::5db8:d822', '64:ff9b:1::5db8:d822'] }),
      );
      await expect(guard.check('nat64.example.test')).resolves.toEqual({ address: '64:ff9b::5db8:d822', family: 6 });
    });
  });
});
