import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import os from 'node:os';
import { RuntimeSubjects, type Heartbeat } from '@switchboard/contracts';
import { JsonLogger, Metrics, NatsClient, SERVICE_CONFIG } from '@switchboard/service-kit';
import { Gauge } from 'prom-client';
import type { MediaAgentConfig } from './config.js';
import { JanusClient, type JanusInfo } from './janus/janus-client.js';

export const MEDIA_SERVER_ID = Symbol('MEDIA_SERVER_ID');
export const JANUS = Symbol('JANUS');

const encoder = new TextEncoder();

/** MEDIA_SERVER_ADDRESSES with `{publicIp}` replaced (addresses still holding it are left out when no IP is set). */
export function announcedAddresses(addresses: readonly string[], publicIp: string | undefined): string[] {
  const ip = publicIp?.includes(':') ? `[${publicIp}]` : publicIp;
  return addresses
    .filter((a) => ip !== undefined || !a.includes('{publicIp}'))
    .map((a) => (ip === undefined ? a : a.replaceAll('{publicIp}', ip)));
}

/** The hosts of the announced addresses (`udp://203.0.113.7:40000-40999` -> `203.0.113.7`), once each. */
export function addressHosts(addresses: readonly string[]): string[] {
  const hosts = addresses
    .map((a) => /^[a-z][a-z0-9+.-]*:\/\/(\[[^\]]+\]|[^:/?#]+)/i.exec(a)?.[1])
    .filter((h): h is string => Boolean(h));
  return [...new Set(hosts)];
}

/**
 * Registers the Janus beside this agent as a media server: every MEDIA_HEARTBEAT_INTERVAL_MS it
 * asks Janus `info` and, when Janus answers, heartbeats (`runtime-registry.v1.heartbeat`, role
 * `mediaserver`) with the Janus version and the configured capacity, region and addresses. When
 * Janus stops answering (or the agent stops) it announces `active: false` once, which the registry
 * takes as gone at once, and stays silent until Janus answers again.
 */
@Injectable()
export class Registration implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer?: NodeJS.Timeout;
  /** The Janus version last announced as active; undefined while the server is announced gone. */
  private announced?: string;
  private checking = false;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: MediaAgentConfig,
    @Inject(MEDIA_SERVER_ID) private readonly mediaServerId: string,
    @Inject(JANUS) private readonly janus: JanusClient,
    private readonly nats: NatsClient,
    private readonly logger: JsonLogger,
    metrics: Metrics,
  ) {
    const janusUp: Gauge = new Gauge({
      name: 'media_agent_janus_up',
      help: "1 while the agent's Janus answers and the agent heartbeats it as an active media server, else 0",
      registers: [metrics.registry],
      collect: () => janusUp.set(this.announced === undefined ? 0 : 1),
    });
  }

  onApplicationBootstrap() {
    this.janus.onChange((change) => {
      if (change.up) {
        this.logger.event('info', 'connected to Janus', { version: change.info.version, janus: this.config.janusUrl });
        void this.check();
      } else {
        this.logger.event('warn', 'lost Janus', { reason: change.reason });
        void this.announceGone(change.reason);
      }
    });
    this.janus.start();
    this.timer = setInterval(() => void this.check(), this.config.mediaHeartbeatIntervalMs);
    this.timer.unref();
  }

  async beforeApplicationShutdown() {
    clearInterval(this.timer);
    await this.announceGone('media-agent stopping');
    await this.janus.stop();
  }

  heartbeat(info: JanusInfo | undefined, active: boolean): Heartbeat {
    const c = this.config;
    const version = info?.version ?? this.announced ?? null;
    const region = c.mediaServerRegion ?? null;
    const addresses = announcedAddresses(c.mediaServerAddresses, c.mediaServerPublicIp);
    return {
      role: 'mediaserver',
      // Tells the registry that an agent commands this server (the simulator's servers only heartbeat).
      type: 'janus',
      server: {
        id: this.mediaServerId,
        region,
        version,
        addresses,
        capacity: c.mediaServerCapacity,
        active,
        lastHeartbeat: new Date().toISOString(),
        computer: {
          hostName: os.hostname(),
          ipAddresses: addressHosts(addresses).map((h) => h.replace(/^\[(.*)\]$/, '$1')),
          processorCount: os.availableParallelism(),
          memoryBytes: os.totalmem(),
          region,
          version,
        },
      },
    };
  }

  /** One turn: ask Janus, heartbeat when it answers, announce the server gone when it stops. */
  private async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      let info: JanusInfo;
      try {
        info = await this.janus.info();
      } catch (e) {
        const reason = (e as Error).message;
        // A Janus that hangs keeps its socket open: start over rather than wait on it.
        if (this.janus.connected) this.janus.reset(reason);
        await this.announceGone(reason);
        return;
      }
      if (this.announced === undefined)
        this.logger.event('info', 'media server registered', {
          mediaServerId: this.mediaServerId,
          version: info.version,
        });
      this.announced = info.version;
      await this.publish(this.heartbeat(info, true));
    } finally {
      this.checking = false;
    }
  }

  private async announceGone(reason: string): Promise<void> {
    if (this.announced === undefined) return;
    const last = this.heartbeat(undefined, false);
    this.announced = undefined;
    this.logger.event('warn', 'media server announced gone', { mediaServerId: this.mediaServerId, reason });
    await this.publish(last);
  }

  private async publish(heartbeat: Heartbeat): Promise<void> {
    try {
      const nc = await Promise.race([
        this.nats.connection$(),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error('NATS is not connected')), this.config.mediaHeartbeatIntervalMs).unref(),
        ),
      ]);
      nc.publish(
        this.nats.subject(RuntimeSubjects.heartbeat),
        encoder.encode(JSON.stringify({ pattern: RuntimeSubjects.heartbeat, data: heartbeat })),
      );
    } catch (e) {
      this.logger.event('warn', 'heartbeat not published', { error: (e as Error).message });
    }
  }
}
