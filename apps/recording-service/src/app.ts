import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions, databaseReadiness } from '@switchboard/persistence';
import {
  createRedis,
  createService,
  JsonLogger,
  ReadinessService,
  REDIS,
  RedisLifecycle,
  redisReadiness,
  renderPlainError,
} from '@switchboard/service-kit';
import type { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import type { RecordingServiceConfig } from './config.js';
import { FilesController } from './files/files.controller.js';
import { RecordingPaths } from './files/paths.js';
import { UrlSigner } from './files/url-signer.js';
import { LocalStorage, S3Storage, STORAGE } from './files/storage.js';
import { ChannelSettings } from './lifecycle/channel-settings.js';
import { EventBus } from './lifecycle/event-bus.js';
import { LifecycleService } from './lifecycle/lifecycle.service.js';
import { Outbox } from './lifecycle/outbox.js';
import { RecordingMetrics } from './metrics.js';
import { persistenceOptions } from './persistence.js';
import { FileRemovals } from './pipeline/file-removals.js';
import { IngestUploads } from './pipeline/ingest-uploads.js';
import { IngestStep } from './pipeline/ingest.step.js';
import { MoveStep } from './pipeline/move.step.js';
import { MuxStep } from './pipeline/mux.step.js';
import { PipelineQueues } from './pipeline/pipeline-queues.js';
import { PipelineService } from './pipeline/pipeline.service.js';
import { IngestProcessor, MoveProcessor, MuxProcessor, SweepProcessor } from './pipeline/processors.js';
import { RecordingDeletion } from './pipeline/recording-deletion.js';
import { RecordingStages } from './pipeline/recording-stages.js';
import { StepRunner } from './pipeline/step-runner.js';
import { Sweeper } from './pipeline/sweeper.js';
import { RecordingsCommandService } from './recordings/recordings-command.service.js';
import { RecordingsQueryService } from './recordings/recordings-query.service.js';
import { RecordingsRpc } from './recordings/recordings.rpc.js';
import { RecordingsStore } from './recordings/recordings.store.js';

/** Base URL of the signed file links: RECORDINGS_PUBLIC_URL, else this server's own address. */
export function publicUrlOf(config: RecordingServiceConfig): string {
  if (config.recordingsPublicUrl) return config.recordingsPublicUrl;
  const host = config.httpHost === '0.0.0.0' || config.httpHost === '::' ? '127.0.0.1' : config.httpHost;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.httpPort}`;
}

/** The S3-compatible bucket when configured, else the local storage directory. */
function storageTarget(config: RecordingServiceConfig, paths: RecordingPaths) {
  if (config.s3Endpoint && config.s3Bucket && config.s3AccessKeyId && config.s3SecretAccessKey) {
    return new S3Storage({
      endpoint: config.s3Endpoint,
      bucket: config.s3Bucket,
      region: config.s3Region,
      accessKeyId: config.s3AccessKeyId,
      secretAccessKey: config.s3SecretAccessKey,
      pathStyle: config.s3PathStyle,
    });
  }
  return new LocalStorage(paths);
}

@Module({})
class RecordingServiceModule {
  static forConfig(config: RecordingServiceConfig): DynamicModule {
    const paths = new RecordingPaths(config.recordingsDir, config.recordingsStorageDir);
    return {
      module: RecordingServiceModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => dataSourceOptions(persistenceOptions(config.databaseUrl, config.databasePoolSize)),
        }),
      ],
      controllers: [RecordingsRpc, FilesController],
      providers: [
        {
          provide: REDIS,
          useFactory: (logger: JsonLogger) => createRedis(config.redisUrl, 'recording-service', { logger }),
          inject: [JsonLogger],
        },
        RedisLifecycle,
        {
          provide: UrlSigner,
          useValue: new UrlSigner(config.recordingsUrlSecret, publicUrlOf(config), config.recordingsUrlTtlSeconds),
        },
        { provide: RecordingPaths, useValue: paths },
        { provide: STORAGE, useValue: storageTarget(config, paths) },
        RecordingMetrics,
        RecordingsStore,
        RecordingsQueryService,
        RecordingsCommandService,
        LifecycleService,
        ChannelSettings,
        EventBus,
        Outbox,
        FileRemovals,
        RecordingDeletion,
        PipelineQueues,
        RecordingStages,
        StepRunner,
        IngestStep,
        IngestUploads,
        MuxStep,
        MoveStep,
        Sweeper,
        IngestProcessor,
        MuxProcessor,
        MoveProcessor,
        SweepProcessor,
        PipelineService,
      ],
    };
  }
}

export async function buildRecordingService(config: RecordingServiceConfig) {
  const app = await createService({
    name: 'recording-service',
    config,
    imports: [RecordingServiceModule.forConfig(config)],
    rpcServer: true,
    renderHttpError: renderPlainError,
  });
  const ds = app.get(DataSource);
  const redis = app.get<Redis>(REDIS);
  app.get(ReadinessService).register('postgres', () => databaseReadiness(ds));
  app.get(ReadinessService).register('redis', () => redisReadiness(redis));
  return app;
}
