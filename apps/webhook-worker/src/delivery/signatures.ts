import { createHmac } from 'node:crypto';

/**
 * The signature headers of a delivery (http-contract.md "Webhooks"), all keyed with the UTF-8 bytes
 * of the application's shared secret:
 * - `X-ApplicationSignature`: Base64(HMAC-SHA256(raw body)), LiveSwitch's header;
 * - Standard Webhooks: `webhook-id` (the delivery id, the same on every retry), `webhook-timestamp`
 *   (Unix seconds of this attempt) and `webhook-signature` = `v1,` + Base64(HMAC-SHA256 of
 *   `${id}.${timestamp}.${body}`). A Standard Webhooks verifier given `whsec_` + Base64(UTF-8 secret)
 *   derives the same key, so it accepts the delivery.
 */
export interface SignatureHeaders {
  /**
   * Spelled as the contract writes it: undici sends names as given, and some receivers look them up case-sensitively.
   */
  'X-ApplicationSignature': string;
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

// The secret goes in as a string: Node keys the HMAC with its UTF-8 bytes, and on Node 24 a Buffer
// key costs about 15 µs more per HMAC (two per delivery).
export function applicationSignature(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body, 'utf8').digest('base64');
}

export function standardWebhookSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${id}.${timestampSeconds}.${body}`, 'utf8').digest('base64');
  return `v1,${mac}`;
}

export function signatureHeaders(
  secret: string,
  deliveryId: string,
  timestampSeconds: number,
  body: string,
): SignatureHeaders {
  return {
    'X-ApplicationSignature': applicationSignature(secret, body),
    'webhook-id': deliveryId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': standardWebhookSignature(secret, deliveryId, timestampSeconds, body),
  };
}

/** The secret a Standard Webhooks library expects for an application's shared secret. */
export function standardWebhooksSecret(sharedSecret: string): string {
  return `whsec_${Buffer.from(sharedSecret, 'utf8').toString('base64')}`;
}
