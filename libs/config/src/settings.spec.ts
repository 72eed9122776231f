import { ConfigError, int, loadConfig, str, url } from './settings.js';
import { addressInCidrs, parseCidr } from './cidr.js';
import { commonSettings } from './common.js';

describe('loadConfig', () => {
  const settings = {
    port: int({ env: 'PORT', default: 80, min: 1, max: 65535, description: 'port' }),
    name: str({ env: 'NAME', description: 'name' }),
    secret: str({ env: 'SECRET', optional: true, sensitive: true, minLength: 8, description: 'secret' }),
    db: url({ env: 'DB', protocols: ['postgres'], default: 'postgres://x', description: 'db' }),
  };

  it('applies defaults and parses values', () => {
    expect(loadConfig(settings, { NAME: 'a', PORT: '8080' })).toEqual({
      port: 8080,
      name: 'a',
      secret: undefined,
      db: 'postgres://x',
    });
  });

  it('names a missing required setting', () => {
    expect(() => loadConfig(settings, {})).toThrow(new ConfigError('NAME', 'is required: name'));
  });

  it('names a bad value and shows it', () => {
    expect(() => loadConfig(settings, { NAME: 'a', PORT: 'eighty' })).toThrow(
      'Invalid configuration: PORT must be an integer (got "eighty")',
    );
    expect(() => loadConfig(settings, { NAME: 'a', PORT: '70000' })).toThrow('PORT must be at most 65535');
    expect(() => loadConfig(settings, { NAME: 'a', DB: 'mysql://x' })).toThrow('DB must use postgres');
  });

  it('never echoes a sensitive value', () => {
    expect(() => loadConfig(settings, { NAME: 'a', SECRET: 'short' })).toThrow(
      /^Invalid configuration: SECRET must be at least 8 characters$/,
    );
  });

  it("refuses a value that still holds the templates' REPLACE_ME placeholder, without echoing it", () => {
    expect(() => loadConfig(settings, { NAME: 'a', SECRET: 'REPLACE_ME_AT_LEAST_32_RANDOM_CHARACTERS' })).toThrow(
      new ConfigError(
        'SECRET',
        'still holds a template placeholder (REPLACE_ME...): set the real value, or leave it unset when it is not used',
      ),
    );
    expect(() =>
      loadConfig(settings, { NAME: 'a', DB: 'postgres://switchboard:REPLACE_ME_PASSWORD@db/switchboard' }),
    ).toThrow(/^Invalid configuration: DB still holds a template placeholder/);
    expect(loadConfig(settings, { NAME: 'replace me', SECRET: 'replace_me_not_the_marker' }).name).toBe('replace me');
  });

  it('requires NATS_URL in the common settings', () => {
    expect(() => loadConfig(commonSettings(1), {})).toThrow(/NATS_URL is required/);
    expect(loadConfig(commonSettings(1), { NATS_URL: 'nats://127.0.0.1:4222' }).natsNamespace).toBe('sb');
  });
});

describe('cidr', () => {
  it('matches IPv4, IPv6 and mapped addresses', () => {
    const blocks = ['127.0.0.1/32', '10.0.0.0/8', '::1/128', 'fd00::/8'].map((c) => parseCidr(c)!);
    expect(addressInCidrs('127.0.0.1', blocks)).toBe(true);
    expect(addressInCidrs('::ffff:127.0.0.1', blocks)).toBe(true);
    expect(addressInCidrs('10.200.3.4', blocks)).toBe(true);
    expect(addressInCidrs('11.0.0.1', blocks)).toBe(false);
    expect(addressInCidrs('::1', blocks)).toBe(true);
    expect(addressInCidrs('fd12::5', blocks)).toBe(true);
    expect(addressInCidrs('fe80::1', blocks)).toBe(false);
  });
  it('rejects malformed blocks', () => {
    expect(parseCidr('10.0.0.0/33')).toBeUndefined();
    expect(parseCidr('nonsense')).toBeUndefined();
    expect(parseCidr('::/0')?.prefix).toBe(0);
  });
});
