// Heartbeat-only media servers (control-plane load tests; a real one is Janus + apps/media-agent):
// they announce themselves to runtime-registry with heartbeats over NATS
// (`<namespace>.runtime-registry.v1.heartbeat`, role `mediaserver`), as real media servers do.
import { randomUUID } from 'node:crypto';
import os from 'node:os';

const SUBJECT = 'runtime-registry.v1.heartbeat';

export class FakeMediaServer {
  /**
   * @param {{ nc: import('@nats-io/transport-node').NatsConnection, namespace: string, index: number, region?:
   * string|null,
   *   capacity?: number, version?: string, heartbeatIntervalMs?: number, id?: string }} options
   */
  constructor({
    nc,
    namespace,
    index,
    region = null,
    capacity = 1000,
    version = 'sim-1.0',
    heartbeatIntervalMs = 2000,
    id = randomUUID(),
  }) {
    this.nc = nc;
    this.namespace = namespace;
    this.id = id;
    this.index = index;
    this.region = region;
    this.capacity = capacity;
    this.version = version;
    this.heartbeatIntervalMs = heartbeatIntervalMs;
    this.heartbeats = 0;
    this.timer = undefined;
  }

  heartbeat() {
    const address = `10.250.0.${(this.index % 250) + 1}`;
    return {
      role: 'mediaserver',
      server: {
        id: this.id,
        region: this.region,
        version: this.version,
        addresses: [`udp://${address}:3478`, `https://${address}:8443`],
        capacity: this.capacity,
        computer: {
          hostName: `sim-media-${this.index}`,
          ipAddresses: [address],
          processorCount: os.cpus().length,
          memoryBytes: os.totalmem(),
          region: this.region,
          version: this.version,
        },
      },
    };
  }

  beat() {
    this.nc.publish(`${this.namespace}.${SUBJECT}`, JSON.stringify({ pattern: SUBJECT, data: this.heartbeat() }));
    this.heartbeats++;
  }

  start() {
    this.beat();
    this.timer = setInterval(() => this.beat(), this.heartbeatIntervalMs);
    this.timer.unref?.();
    return this;
  }

  /** Stops heartbeating: the registry marks the media server gone once its heartbeat timeout passes. */
  stop() {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
