/** Injection token of the deployment's Redis key prefix. */
export const KEY_PREFIX = Symbol('KEY_PREFIX');

/**
 * Redis key layout of the live model (all under the deployment's REDIS_KEY_PREFIX):
 *   apps                      set of application ids in use
 *   app:{a}                   hash: organizationId, registeredAt
 *   app:{a}:channels          set of active channel ids
 *   app:{a}:users|devices|clients|connections   sets of live ids (devices as `{u}/{d}`, clients as `{u}/{d}/{cl}`)
 * Hash tags `{a}` keep one application's keys in one cluster slot, so MULTI/Lua stay atomic.
 */
export class RuntimeKeys {
  constructor(private readonly prefix: string) {}
  apps() {
    return `${this.prefix}apps`;
  }
  app(a: string) {
    return `${this.prefix}app:{${a}}`;
  }
  appSet(a: string, kind: 'channels' | 'users' | 'devices' | 'clients' | 'connections') {
    return `${this.prefix}app:{${a}}:${kind}`;
  }
}
