import { createHmac } from 'node:crypto';
import { loadGatewayConfig } from '../config.js';
import { IceServers } from './ice-servers.js';

const BASE = { NATS_URL: 'nats://127.0.0.1:4222' };
const load = (env: Record<string, string>) => loadGatewayConfig({ ...BASE, ...env });

describe('IceServers', () => {
  it('lists nothing without ICE settings (host candidates only)', () => {
    expect(new IceServers(load({})).forClient('client-1')).toEqual([]);
  });

  it('gives TURN a credential that expires after the TTL, as coturn use-auth-secret computes it', () => {
    const config = load({
      ICE_TURN_URLS: 'turn:turn.example.test:3478',
      ICE_TURN_SECRET: 's3cret',
      ICE_TURN_CREDENTIAL_TTL_SECONDS: '600',
    });
    const [turn] = new IceServers(config).forClient('client-1', Date.UTC(2026, 0, 1) + 999);
    const expiry = Date.UTC(2026, 0, 1) / 1000 + 600;
    expect(turn).toEqual({
      urls: ['turn:turn.example.test:3478'],
      username: `${expiry}:client-1`,
      credential: createHmac('sha1', 's3cret').update(`${expiry}:client-1`).digest('base64'),
    });
  });

  it('refuses TURN URLs without a secret, and URLs of another scheme', () => {
    expect(() => load({ ICE_TURN_URLS: 'turn:turn.example.test' })).toThrow(/ICE_TURN_SECRET/);
    expect(() => load({ ICE_STUN_URLS: 'http://stun.example.test' })).toThrow(/ICE_STUN_URLS/);
  });
});
