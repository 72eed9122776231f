import 'reflect-metadata';
import { Global, Module, type DynamicModule, type INestApplication, type Provider } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { ConfigError } from '@switchboard/config';
import { CORRELATION_HEADER, acceptCorrelationId, runWithAcceptedCorrelation } from './correlation.js';
import { DomainError } from '@switchboard/contracts';
import { sendError, TransportErrorFilter, type HttpErrorRenderer } from './errors.js';
import { HealthModule, ReadinessService } from './health.js';
import { clientErrorHandler, frameworkErrorHandler, installJsonBodyParser } from './http-edge.js';
import { JsonLogger } from './logger.js';
import { Metrics, MetricsModule } from './metrics.js';
import { NATS_OPTIONS, NatsClient, type NatsOptions } from './nats.js';
import { NamespacedNatsServer } from './nats-server.js';
import { startOpsServer } from './ops-server.js';

/** The settings every service has (see `commonSettings` in @switchboard/config). */
export interface BaseConfig {
  readonly httpHost: string;
  readonly httpPort: number;
  /** Port of /healthz, /readyz, /metrics when they are not on httpPort (see startOpsServer). */
  readonly opsPort?: number;
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error';
  readonly natsUrl: string;
  readonly natsNamespace: string;
  readonly natsRequestTimeoutMs: number;
  readonly shutdownTimeoutMs: number;
}

export const SERVICE_CONFIG = Symbol('SERVICE_CONFIG');

const SHUTTING_DOWN = () => new DomainError('Unavailable', 'The service is shutting down; try again.');

@Global()
@Module({})
class CoreModule {}

export interface ServiceOptions {
  /** Service name: logs, metrics, NATS queue group. */
  name: string;
  config: BaseConfig;
  /** The service's feature module(s). */
  imports: Array<DynamicModule | (new (...args: never[]) => unknown)>;
  /** Answers requests over NATS with `@MessagePattern` handlers. */
  rpcServer: boolean;
  renderHttpError: HttpErrorRenderer;
  bodyLimitBytes?: number;
  /**
   * CIDR blocks of reverse proxies whose X-Forwarded-For is believed: `request.ip` is then the last
   * address of the chain not in them. Empty or absent: the TCP peer, the header ignored.
   */
  trustedProxies?: readonly string[];
  logger?: JsonLogger;
}

/**
 * Builds a service: Fastify HTTP server with /healthz, /readyz, /metrics, JSON logs with a
 * correlation id per request, one error filter for HTTP and NATS, the NATS client and (optionally)
 * the NATS request server. The caller listens (see `runService`) or drives it in tests.
 */
export async function createService(options: ServiceOptions): Promise<NestFastifyApplication> {
  const { config, name } = options;
  const logger = options.logger ?? new JsonLogger(name, config.logLevel);
  const natsOptions: NatsOptions = {
    url: config.natsUrl,
    namespace: config.natsNamespace,
    requestTimeoutMs: config.natsRequestTimeoutMs,
    name: `${name}-${process.pid}`,
  };
  const providers: Provider[] = [
    { provide: SERVICE_CONFIG, useValue: config },
    { provide: JsonLogger, useValue: logger },
    { provide: NATS_OPTIONS, useValue: natsOptions },
    NatsClient,
    // No global interceptor: the correlation id and the handled-request metrics of NATS handlers
    // are the NATS server's (NamespacedNatsServer), so HTTP requests skip Nest's interceptor
    // (Observable) pipeline altogether.
  ];
  const root: DynamicModule = {
    module: CoreModule,
    global: true,
    imports: [
      HealthModule.forService(!config.opsPort),
      MetricsModule.forService(name, !config.opsPort),
      ...options.imports,
    ],
    providers,
    exports: [SERVICE_CONFIG, NATS_OPTIONS, NatsClient, JsonLogger],
  };
  const bodyLimit = options.bodyLimitBytes ?? 1024 * 1024;
  const adapter = new FastifyAdapter({
    bodyLimit,
    trustProxy: options.trustedProxies?.length ? [...options.trustedProxies] : false,
    // Fastify's own 503 while closing has its own body: answered by the hook below instead.
    return503OnClosing: false,
    // A path segment over 512 characters is 414 (no id of either interface comes near it).
    routerOptions: { maxParamLength: 512 },
    frameworkErrors: frameworkErrorHandler(options.renderHttpError),
    clientErrorHandler: clientErrorHandler(options.renderHttpError),
  });
  // Nest's parsers (JSON, and urlencoded forms no route takes) are replaced by installJsonBodyParser.
  const app = await NestFactory.create<NestFastifyApplication>(root, adapter, {
    logger,
    bufferLogs: false,
    abortOnError: false,
    bodyParser: false,
  });
  app.useGlobalFilters(new TransportErrorFilter(options.renderHttpError));

  const metrics = app.get(Metrics);
  const fastify = app.getHttpAdapter().getInstance();
  installJsonBodyParser(fastify, bodyLimit);
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  fastify.addHook('onRequest', (request, reply, done) => {
    const id = acceptCorrelationId(request.headers[CORRELATION_HEADER] as string | undefined);
    void reply.header(CORRELATION_HEADER, id);
    // A request on a kept-alive connection while the server closes: another replica takes it.
    if (!closing) return runWithAcceptedCorrelation(id, done);
    void reply.header('connection', 'close');
    sendError(options.renderHttpError, SHUTTING_DOWN(), request, reply);
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpDuration.observe(
      { method: request.method, route, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    done();
  });

  const nats = app.get(NatsClient);
  void nats.connection$().catch(() => undefined);
  app.get(ReadinessService).register('nats', () => nats.ping());

  if (options.rpcServer) {
    app.connectMicroservice(
      { strategy: new NamespacedNatsServer({ ...natsOptions, queue: name }, metrics, logger) },
      { inheritAppConfig: true },
    );
  }
  return app;
}

/**
 * Entry point of a service process: validates configuration (a bad value stops the process with
 * a message naming the setting, exit code 78), starts listening, subscribes its NATS request
 * handlers whenever NATS answers (readiness says so meanwhile), and shuts down gracefully on SIGTERM/SIGINT:
 * readiness goes false, in-flight work finishes within SHUTDOWN_TIMEOUT_MS, then the process exits.
 */
export async function runService(
  name: string,
  loadConfig: () => BaseConfig,
  build: (config: BaseConfig) => Promise<INestApplication>,
): Promise<void> {
  let config: BaseConfig;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(
        `${JSON.stringify({ time: new Date().toISOString(), level: 'fatal', service: name, msg: e.message, setting: e.setting })}\n`,
      );
      process.stderr.write(`${name}: ${e.message}\n`);
      process.exit(78);
    }
    throw e;
  }
  const log = new JsonLogger(name, config.logLevel);
  const fatal = (e: unknown) => {
    log.event('fatal', `${name} failed to start: ${(e as Error).message}`);
    process.exit(1);
  };
  let app: INestApplication;
  // The NATS request handlers are subscribed once NATS answers, which may be long after the start
  // (NATS down or not reachable yet): meanwhile the service listens, /healthz answers and /readyz
  // says 503 with what it waits for, instead of a process with no port that an orchestrator's
  // probes kill over and over.
  let subscribed = false;
  try {
    app = await build(config);
    if (app.getMicroservices().length > 0) {
      app.get(ReadinessService).register('requestHandlers', async () => {
        if (!subscribed) throw new Error('not subscribed on NATS yet');
      });
    }
    await app.listen(config.httpPort, config.httpHost);
    if (config.opsPort)
      await startOpsServer({
        host: config.httpHost,
        port: config.opsPort,
        readiness: app.get(ReadinessService),
        metrics: app.get(Metrics),
      });
  } catch (e) {
    return fatal(e);
  }
  log.event('info', `${name} listening`, {
    url: `http://${config.httpHost}:${config.httpPort}`,
    ...(config.opsPort ? { ops: `http://${config.httpHost}:${config.opsPort}` } : {}),
  });
  app.startAllMicroservices().then(() => {
    subscribed = true;
  }, fatal);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.event('info', `${signal} received, shutting down`);
    app.get(ReadinessService).markDraining();
    const force = setTimeout(() => {
      log.event('error', 'shutdown timed out, exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs + 2000);
    force.unref();
    try {
      await app.close();
      process.exit(0);
    } catch (e) {
      log.event('error', 'shutdown failed', { error: (e as Error).message });
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}
