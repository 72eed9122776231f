/** The real runtime-registry beside a test's gateways, and the Nest-packet requests the specs send it. */
import type { NatsConnection } from '@nats-io/transport-node';
import { encodeClientToken, type ChannelClaim } from '@switchboard/contracts';
import { freePort, spawnService, type SpawnedService } from '@switchboard/testing';
import { randomUUID } from 'node:crypto';
import type { Identity } from './sync-client.testing.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** runtime-registry in its own process, on the given NATS and the namespace's keys of the given Redis. */
export async function spawnTestRegistry(natsUrl: string, redisUrl: string, namespace: string): Promise<SpawnedService> {
  return spawnService('runtime-registry', {
    NATS_URL: natsUrl,
    NATS_NAMESPACE: namespace,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: `${namespace}:`,
    HTTP_PORT: String(await freePort()),
    LOG_LEVEL: 'warn',
  });
}

/** A request in Nest's packet format, as the gateway sends it; rejects with the subject and the answer's error. */
export async function nestRequest(
  nc: NatsConnection,
  namespace: string,
  subject: string,
  data: unknown,
): Promise<unknown> {
  const msg = await nc.request(
    `${namespace}.${subject}`,
    encoder.encode(JSON.stringify({ pattern: subject, data, id: randomUUID() })),
    { timeout: 10000 },
  );
  const reply = JSON.parse(decoder.decode(msg.data)) as { err?: unknown; response?: unknown };
  if (reply.err) throw new Error(`${subject}: ${JSON.stringify(reply.err)}`);
  return reply.response;
}

/** A register token for `id`, valid for ten minutes, claiming `channels` as a participant. */
export function registerToken(
  id: Identity,
  application: { applicationId: string; secret: string; channels: ChannelClaim[] },
): string {
  const now = Math.floor(Date.now() / 1000);
  return encodeClientToken(
    {
      iat: now,
      exp: now + 600,
      type: 'register',
      applicationId: application.applicationId,
      ...id,
      clientRoles: ['participant'],
      channels: application.channels,
    },
    application.secret,
  );
}
