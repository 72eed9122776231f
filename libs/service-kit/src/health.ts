import { Controller, Get, Global, Injectable, Module, Res, type DynamicModule } from '@nestjs/common';
import type { FastifyReply } from 'fastify';

export type ReadinessCheck = () => Promise<void>;

/** Each dependency registers a check; /readyz runs them all with a timeout. */
@Injectable()
export class ReadinessService {
  private readonly checks = new Map<string, ReadinessCheck>();
  private draining = false;

  register(name: string, check: ReadinessCheck) {
    this.checks.set(name, check);
  }

  /** Called at shutdown: the service stops advertising readiness before it stops taking work. */
  markDraining() {
    this.draining = true;
  }

  async evaluate(timeoutMs = 2000): Promise<{ ready: boolean; checks: Record<string, string> }> {
    const entries = await Promise.all(
      [...this.checks].map(async ([name, check]) => {
        try {
          await withTimeout(check(), timeoutMs);
          return [name, 'ok'] as const;
        } catch (e) {
          return [name, `failed: ${(e as Error).message}`] as const;
        }
      }),
    );
    const checks: Record<string, string> = Object.fromEntries(entries);
    if (this.draining) checks.shutdown = 'draining';
    return { ready: !this.draining && entries.every(([, v]) => v === 'ok'), checks };
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

@Controller()
export class HealthController {
  constructor(private readonly readiness: ReadinessService) {}

  @Get('healthz')
  healthz() {
    return { status: 'ok' };
  }

  @Get('readyz')
  async readyz(@Res() reply: FastifyReply) {
    const { status, body } = await readinessAnswer(this.readiness);
    await reply.status(status).send(body);
  }
}

/** What `/readyz` answers: 200 or 503, with every check's state. */
export async function readinessAnswer(
  readiness: ReadinessService,
): Promise<{ status: 200 | 503; body: { status: 'ok' | 'unavailable'; checks: Record<string, string> } }> {
  const result = await readiness.evaluate();
  return {
    status: result.ready ? 200 : 503,
    body: { status: result.ready ? 'ok' : 'unavailable', checks: result.checks },
  };
}

@Global()
@Module({})
export class HealthModule {
  /** `routes: false`: readiness without the `/healthz` and `/readyz` routes (served on OPS_PORT, see ops-server). */
  static forService(routes = true): DynamicModule {
    return {
      module: HealthModule,
      controllers: routes ? [HealthController] : [],
      providers: [ReadinessService],
      exports: [ReadinessService],
    };
  }
}
