import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  ChannelRecordingGetRequest,
  ChannelRecordingReadRequest,
  ChannelRecordingRef,
  ChannelRecordingsListRequest,
  ConnectionRecordingGetRequest,
  ConnectionRecordingReadRequest,
  ConnectionRecordingsListRequest,
  ManagementReadSubjects,
  parseRecordingCommandRequest,
  parseRecordingQueryRequest,
  RecordingSubjects,
  StorageUsedSizeRequest,
  validator,
  type RecordingQuery,
} from '@switchboard/contracts';
import { RecordingsCommandService } from './recordings-command.service.js';
import { RecordingsQueryService } from './recordings-query.service.js';

const channelList = validator(ChannelRecordingsListRequest);
const channelRef = validator(ChannelRecordingRef);
const channelGet = validator(ChannelRecordingGetRequest);
const channelRead = validator(ChannelRecordingReadRequest);
const connectionList = validator(ConnectionRecordingsListRequest);
const connectionGet = validator(ConnectionRecordingGetRequest);
const connectionRead = validator(ConnectionRecordingReadRequest);
const usedSize = validator(StorageUsedSizeRequest);

const CHANNEL_READ_KIND = {
  MuxJson: 'channelRecording.muxJson',
  Url: 'channelRecording.url',
  AudioUrl: 'channelRecording.audioUrl',
  VideoUrl: 'channelRecording.videoUrl',
} as const;
const CONNECTION_READ_KIND = {
  Url: 'management.connectionRecording.url',
  AudioUrl: 'management.connectionRecording.audioUrl',
  VideoUrl: 'management.connectionRecording.videoUrl',
} as const;

/**
 * NATS request handlers: `recording-service.v1.query` (every read, by `kind`) and
 * `recording-service.v1.command` (expiry patch, delete); and the per-operation subjects management-api
 * speaks (`ManagementReadSubjects`, interface-b/management-messaging.ts), answered by the same code.
 */
@Controller()
export class RecordingsRpc {
  constructor(
    private readonly queries: RecordingsQueryService,
    private readonly commands: RecordingsCommandService,
  ) {}

  @MessagePattern(RecordingSubjects.query)
  query(@Payload() body: unknown): Promise<unknown> {
    const request = parseRecordingQueryRequest(body);
    return this.queries.run(request.scope, request.query);
  }

  @MessagePattern(RecordingSubjects.command)
  command(@Payload() body: unknown): Promise<null> {
    const request = parseRecordingCommandRequest(body);
    return this.commands.run(request.scope, request.command);
  }

  // ---- management-api subjects ----

  @MessagePattern(ManagementReadSubjects.channelRecordingsList)
  managementChannelList(@Payload() body: unknown): Promise<unknown> {
    const r = channelList.parse(body);
    return this.queries.run(r.scope, {
      kind: 'management.channelRecordings.list',
      applicationId: r.applicationId,
      options: r.query,
    });
  }

  @MessagePattern(ManagementReadSubjects.channelRecordingGet)
  managementChannelGet(@Payload() body: unknown): Promise<unknown> {
    const { scope, query, ...ref } = channelGet.parse(body);
    return this.queries.run(scope, {
      kind: 'management.channelRecording.get',
      ...ref,
      ...(query ? { options: query } : {}),
    });
  }

  @MessagePattern(ManagementReadSubjects.channelRecordingDelete)
  managementChannelDelete(@Payload() body: unknown): Promise<null> {
    const { scope, ...ref } = channelRef.parse(body);
    return this.commands.run(scope, { kind: 'channelRecording.delete', ...ref });
  }

  @MessagePattern(ManagementReadSubjects.channelRecordingRead)
  managementChannelRead(@Payload() body: unknown): Promise<unknown> {
    const { scope, what, ...ref } = channelRead.parse(body);
    return this.queries.run(scope, { kind: CHANNEL_READ_KIND[what], ...ref } as RecordingQuery);
  }

  @MessagePattern(ManagementReadSubjects.connectionRecordingsList)
  managementConnectionList(@Payload() body: unknown): Promise<unknown> {
    const r = connectionList.parse(body);
    return this.queries.run(r.scope, {
      kind: 'management.connectionRecordings.list',
      applicationId: r.applicationId,
      options: r.query,
    });
  }

  @MessagePattern(ManagementReadSubjects.connectionRecordingGet)
  managementConnectionGet(@Payload() body: unknown): Promise<unknown> {
    const { scope, query, ...ref } = connectionGet.parse(body);
    return this.queries.run(scope, {
      kind: 'management.connectionRecording.get',
      ...ref,
      ...(query ? { options: query } : {}),
    });
  }

  @MessagePattern(ManagementReadSubjects.connectionRecordingRead)
  managementConnectionRead(@Payload() body: unknown): Promise<unknown> {
    const { scope, what, ...ref } = connectionRead.parse(body);
    return this.queries.run(scope, { kind: CONNECTION_READ_KIND[what], ...ref } as RecordingQuery);
  }

  @MessagePattern(ManagementReadSubjects.storageUsedSize)
  async managementUsedSize(@Payload() body: unknown): Promise<number> {
    const r = usedSize.parse(body);
    let total = 0;
    for (const applicationId of new Set(r.applicationIds))
      total += (await this.queries.run(r.scope, { kind: 'storage.usedSize.application', applicationId })) as number;
    return total;
  }
}
