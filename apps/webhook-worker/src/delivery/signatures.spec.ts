import { createHmac } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { applicationSignature, signatureHeaders, standardWebhooksSecret } from './signatures.js';

describe('delivery signatures', () => {
  const secret = 'sécret with ünicode and spaces';
  const body = JSON.stringify({ id: 'evt-1', type: 'client.registered', message: 'héllo' });

  it('X-ApplicationSignature is Base64(HMAC-SHA256(body, UTF-8 secret))', () => {
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8'))
      .update(Buffer.from(body, 'utf8'))
      .digest('base64');
    expect(applicationSignature(secret, body)).toBe(expected);
  });

  it('each secret keys its own signatures, however the secrets alternate', () => {
    const direct = (k: string) => createHmac('sha256', Buffer.from(k, 'utf8')).update(body, 'utf8').digest('base64');
    for (const k of [secret, 'other secret', secret, 'other secret'])
      expect(applicationSignature(k, body)).toBe(direct(k));
    expect(applicationSignature(secret, body)).not.toBe(applicationSignature('other secret', body));
  });

  it('the Standard Webhooks headers verify with the standardwebhooks library given whsec_ + Base64(secret)', () => {
    const ts = Math.floor(Date.now() / 1000);
    const headers = signatureHeaders(secret, 'a3c0e2f4-0000-4000-8000-000000000001', ts, body);
    expect(headers['webhook-id']).toBe('a3c0e2f4-0000-4000-8000-000000000001');
    expect(headers['webhook-timestamp']).toBe(String(ts));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const wh = new Webhook(standardWebhooksSecret(secret));
    expect(wh.verify(body, headers as unknown as Record<string, string>)).toEqual(JSON.parse(body));
    expect(wh.sign(headers['webhook-id'], new Date(ts * 1000), body)).toBe(headers['webhook-signature']);
  });

  it('a changed body, id or timestamp does not verify', () => {
    const ts = Math.floor(Date.now() / 1000);
    const headers = signatureHeaders(secret, 'msg-1', ts, body) as unknown as Record<string, string>;
    const wh = new Webhook(standardWebhooksSecret(secret));
    expect(() => wh.verify(body.replace('héllo', 'hello'), headers)).toThrow(WebhookVerificationError);
    expect(() => wh.verify(body, { ...headers, 'webhook-id': 'msg-2' })).toThrow(WebhookVerificationError);
    expect(() => wh.verify(body, { ...headers, 'webhook-timestamp': String(ts + 1) })).toThrow(
      WebhookVerificationError,
    );
  });
});
