/**
 * The services the hostile corpus attacks, spawned as real processes on the jest run's NATS, Redis
 * and PostgreSQL, with a sampler of each one's resident memory (from /proc/<pid>/status).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { parseAllDocuments } from 'yaml';
import { changeStreamName, eventStreamName } from '@switchboard/contracts';
import {
  createTestDatabase,
  findApp,
  flushRedisPrefix,
  freePort,
  repoRoot,
  serviceTestEnv,
  spawnService,
  testNamespace,
  testServers,
  type SpawnedService,
  type TestDatabase,
} from '@switchboard/testing';

const run = promisify(execFile);

/** All six: management-api forwards recording, usage and delivery reads to the other three. */
export const ATTACKED_SERVICES = [
  'management-api',
  'runtime-registry',
  'admin-gateway',
  'recording-service',
  'webhook-worker',
  'usage-aggregator',
] as const;
export type AttackedService = (typeof ATTACKED_SERVICES)[number];

export interface HostileStack {
  ns: string;
  operatorKey: string;
  organizationId: string;
  services: Record<AttackedService, SpawnedService>;
  gatewayUrl: string;
  managementUrl: string;
  nats: NatsConnection;
  memory: MemorySampler;
  /**
   * Messages on the domain event stream and the change notice stream (what webhook-worker and management-api consume).
   */
  streamMessages(): Promise<{ events: number; changes: number }>;
  stop(): Promise<void>;
}

export async function startHostileStack(): Promise<HostileStack> {
  const servers = testServers();
  const ns = testNamespace('hostile');
  const db: TestDatabase = await createTestDatabase('hostile');
  const env = { ...serviceTestEnv(ns, db.url), NATS_REQUEST_TIMEOUT_MS: '3000' };
  const boot = await run(process.execPath, [findApp('management-api').bootstrap!], { env: { ...process.env, ...env } });
  const { apiKey: operatorKey, organizationId } = JSON.parse(boot.stdout) as { apiKey: string; organizationId: string };
  const recordings = path.join(servers.dataDir, ns);
  const own: Partial<Record<AttackedService, Record<string, string>>> = {
    // A socket the corpus gets closed (a refused join token) must not unregister its client during the run.
    'admin-gateway': { SYNC_GRACE_PERIOD_MS: '600000' },
    'recording-service': {
      RECORDINGS_URL_SECRET: 'hostile-recordings-url-secret-0123456789abcdef',
      RECORDINGS_DIR: path.join(recordings, 'work'),
      RECORDINGS_STORAGE_DIR: path.join(recordings, 'storage'),
    },
  };
  // HOSTILE_NODE_OPTIONS: node flags for the services, e.g. a preload logging process.memoryUsage() when measuring.
  const spawned = await Promise.all(
    ATTACKED_SERVICES.map(async (name) =>
      spawnService(name, {
        ...env,
        ...own[name],
        ...(process.env.HOSTILE_NODE_OPTIONS ? { NODE_OPTIONS: process.env.HOSTILE_NODE_OPTIONS } : {}),
        HTTP_PORT: String(await freePort()),
      }),
    ),
  );
  const services = Object.fromEntries(ATTACKED_SERVICES.map((name, index) => [name, spawned[index]!])) as Record<
    AttackedService,
    SpawnedService
  >;
  const nats = await connect({ servers: servers.natsUrl });
  const jsm = await jetstreamManager(nats);
  const memory = new MemorySampler(services);
  const messagesOf = async (stream: string) => {
    try {
      return (await jsm.streams.info(stream)).state.messages;
    } catch {
      return 0; // not created yet: nothing was published
    }
  };
  return {
    ns,
    operatorKey,
    organizationId,
    services,
    gatewayUrl: services['admin-gateway'].url!,
    managementUrl: services['management-api'].url!,
    nats,
    memory,
    streamMessages: async () => ({
      events: await messagesOf(eventStreamName(ns)),
      changes: await messagesOf(changeStreamName(ns)),
    }),
    async stop() {
      memory.stop();
      await nats.close();
      await Promise.all(spawned.map((service) => service.stop()));
      await flushRedisPrefix(servers.redisUrl, `${ns}:`);
      await db.drop();
    },
  };
}

/**
 * Peak resident memory of each service, in bytes: the kernel's high-water mark, sampled so a dead process keeps its
 * last figure.
 */
export class MemorySampler {
  readonly peakBytes: Record<string, number> = {};
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly services: Record<string, SpawnedService>) {
    this.timer = setInterval(() => this.sample(), 250);
    this.timer.unref();
    this.sample();
  }

  sample(): void {
    for (const [name, service] of Object.entries(this.services)) {
      const peak = residentPeakBytes(service.pid);
      if (peak !== null) this.peakBytes[name] = Math.max(this.peakBytes[name] ?? 0, peak);
    }
  }

  stop(): void {
    this.sample();
    clearInterval(this.timer);
  }
}

/** VmHWM (peak resident set) of a process, or null once it has exited. */
export function residentPeakBytes(pid: number): number | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(status);
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

const UNIT_BYTES: Record<string, number> = {
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  K: 1000,
  M: 1000 ** 2,
  G: 1000 ** 3,
};

/** The memory limit of each service's main container in k8s/<service>.yaml, in bytes. */
export function kubernetesMemoryLimits(): Record<string, number> {
  const limits: Record<string, number> = {};
  for (const service of ATTACKED_SERVICES) {
    const file = path.join(repoRoot(), 'k8s', `${service}.yaml`);
    for (const doc of parseAllDocuments(fs.readFileSync(file, 'utf8'))) {
      const manifest = doc.toJSON() as {
        kind?: string;
        metadata?: { name?: string };
        spec?: {
          template?: { spec?: { containers?: Array<{ name: string; resources?: { limits?: { memory?: string } } }> } };
        };
      };
      if (manifest?.kind !== 'Deployment' || manifest.metadata?.name !== service) continue;
      const container =
        manifest.spec?.template?.spec?.containers?.find((c) => c.name === service) ??
        manifest.spec?.template?.spec?.containers?.[0];
      const memory = container?.resources?.limits?.memory;
      const match = memory ? /^(\d+)(Ki|Mi|Gi|K|M|G)?$/.exec(memory) : null;
      if (match) limits[service] = Number(match[1]) * (match[2] ? UNIT_BYTES[match[2]]! : 1);
    }
  }
  return limits;
}
