/** When a client token expires (its `exp`, Unix seconds), read without checking its signature. */
export function tokenExpiry(token: string): number | null {
  const payload = token.split('.')[1];
  if (!payload) return null;
  try {
    const base64 = payload.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
    const padded = base64 + '='.repeat((4 - (base64.length % 4)) % 4);
    const claims = JSON.parse(atob(padded)) as { exp?: unknown };
    return typeof claims.exp === 'number' ? claims.exp : null;
  } catch {
    return null;
  }
}

/**
 * Milliseconds from now until a token should be replaced: `leadSeconds` before its expiry, but
 * never later than 80% of the time left (short-lived tokens), and not below one second.
 */
export function refreshDelayMs(expirySeconds: number, nowMs: number, leadSeconds: number): number {
  const leftMs = expirySeconds * 1000 - nowMs;
  return Math.max(1000, Math.min(leftMs - leadSeconds * 1000, leftMs * 0.8));
}
