/**
 * A strict Content-Security-Policy: only this origin's script and style files, no inline code;
 * the page may connect to this origin (tokens) and to the gateway's `/sync` socket, nothing else.
 */
export function securityHeaders(syncUrl: string): Readonly<Record<string, string>> {
  const policy = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "media-src 'self' mediastream:",
    `connect-src 'self' ${syncUrl}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
  return {
    'content-security-policy': policy,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'permissions-policy': 'camera=(self), microphone=(self)',
  };
}
