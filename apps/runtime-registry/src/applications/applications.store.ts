import { Inject, Injectable } from '@nestjs/common';
import { DomainError, type ApplicationSnapshot, type CallerScope } from '@switchboard/contracts';
import type { Redis } from 'ioredis';
import { REDIS } from '@switchboard/service-kit';
import { KEY_PREFIX, RuntimeKeys } from './runtime-keys.js';

@Injectable()
export class ApplicationsStore {
  private readonly keys: RuntimeKeys;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(KEY_PREFIX) prefix: string,
  ) {
    this.keys = new RuntimeKeys(prefix);
  }

  /** Application ids in use; an organization sees only its own, an operator sees all. */
  async list(scope: CallerScope): Promise<string[]> {
    const ids = (await this.redis.smembers(this.keys.apps())).sort();
    if (scope.operator) return ids;
    if (!ids.length) return [];
    const owners = await this.owners(ids);
    return ids.filter((_, i) => owners[i] === scope.organizationId);
  }

  async snapshot(scope: CallerScope, applicationId: string): Promise<ApplicationSnapshot> {
    const k = this.keys;
    const [[, org], [, channels], [, users], [, devices], [, clients], [, connections]] = (await this.redis
      .multi()
      .hget(k.app(applicationId), 'organizationId')
      .scard(k.appSet(applicationId, 'channels'))
      .scard(k.appSet(applicationId, 'users'))
      .scard(k.appSet(applicationId, 'devices'))
      .scard(k.appSet(applicationId, 'clients'))
      .scard(k.appSet(applicationId, 'connections'))
      .exec()) as Array<[Error | null, unknown]>;
    // Another organization's application answers exactly like a missing one.
    if (org === null || (!scope.operator && org !== scope.organizationId)) {
      throw new DomainError('NotFound', `No application '${applicationId}' is in use.`);
    }
    return {
      id: applicationId,
      channelCount: Number(channels),
      userCount: Number(users),
      deviceCount: Number(devices),
      clientCount: Number(clients),
      connectionCount: Number(connections),
    };
  }

  async register(applicationId: string, organizationId: string): Promise<void> {
    const claimed = await this.redis.hsetnx(this.keys.app(applicationId), 'organizationId', organizationId);
    if (!claimed) {
      const owner = await this.redis.hget(this.keys.app(applicationId), 'organizationId');
      if (owner !== organizationId) throw new DomainError('Conflict', `Application '${applicationId}' belongs to another organization.`);
    }
    await this.redis.multi().hsetnx(this.keys.app(applicationId), 'registeredAt', String(Date.now())).sadd(this.keys.apps(), applicationId).exec();
  }

  private async owners(ids: string[]): Promise<Array<string | null>> {
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hget(this.keys.app(id), 'organizationId');
    const results = (await pipeline.exec()) ?? [];
    return results.map(([, v]) => (typeof v === 'string' ? v : null));
  }
}
