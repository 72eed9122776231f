import { TargetGuard, TargetRefused, TargetUnresolved } from './ssrf-guard.js';

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
