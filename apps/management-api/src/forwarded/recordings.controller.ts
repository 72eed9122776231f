import { Controller, Delete, Get, Param, Query } from '@nestjs/common';
import {
  ConnectionRecording,
  ConnectionRecordingList,
  ManagementChannelRecording,
  ManagementChannelRecordingList,
  ManagementReadSubjects,
  NumberValueResponse,
  StringValueResponse,
  type CHANNEL_RECORDING_READS,
  type CONNECTION_RECORDING_READS,
} from '@switchboard/contracts';
import { Type } from '@sinclair/typebox';
import type { QueryParams } from '@switchboard/odata';
import { ApiDoc } from '@switchboard/service-kit';
import { CurrentCaller, type Caller } from '../auth/caller.js';
import { API_VERSION_DOC, LIST_QUERY_DOC, SINGLE_QUERY_DOC } from '../common/odata-query.js';
import {
  FORWARDED_LIST_OPTIONS,
  FORWARDED_SINGLE_OPTIONS,
  forwardedNamesDoc,
  ForwardedReadsService,
  listEnvelope,
  uuidParam,
  withQuery,
} from './forwarded-reads.service.js';

const FORWARDED = (service: string, subject: string) =>
  `Answered by ${service} (\`${subject}\`) with the OData options passed through. 404 when the application (or the recording) is not the organization's; 503 when ${service} is down, 504 when it is slow.`;
const NAMES = forwardedNamesDoc('recording');
const LIST_DOC = LIST_QUERY_DOC.filter(
  (q) => (FORWARDED_LIST_OPTIONS as readonly string[]).includes(q.name) || q.name === 'api-version',
);
const SELECT_DOC = SINGLE_QUERY_DOC.filter(
  (q) => (FORWARDED_SINGLE_OPTIONS as readonly string[]).includes(q.name) || q.name === 'api-version',
);
const SCALAR_DOC = SINGLE_QUERY_DOC;
const EmptyObject = Type.Object(
  {},
  { $id: 'EmptyObject', additionalProperties: false, description: 'An empty object.' },
);

type ChannelRead = (typeof CHANNEL_RECORDING_READS)[number];
type ConnectionRead = (typeof CONNECTION_RECORDING_READS)[number];

@Controller('ChannelRecordings')
export class ChannelRecordingsController {
  constructor(private readonly reads: ForwardedReadsService) {}

  @Get(':applicationId')
  @ApiDoc({
    summary: 'Channel recordings of an application',
    description: FORWARDED('recording-service', ManagementReadSubjects.channelRecordingsList) + NAMES,
    tags: ['Channel recordings'],
    response: ManagementChannelRecordingList,
    errors: [404, 503, 504],
    query: LIST_DOC,
  })
  async list(
    @CurrentCaller() caller: Caller,
    @Param('applicationId') applicationId: string,
    @Query() query: QueryParams,
  ) {
    const options = this.reads.listOptions(query, 'ChannelRecordings');
    await this.reads.ownApplication(caller, applicationId);
    return listEnvelope(
      await this.reads.request(ManagementReadSubjects.channelRecordingsList, {
        scope: this.reads.scope(caller),
        applicationId,
        query: options,
      }),
    );
  }

  @Get(':applicationId/:channelId/:channelRecordingId')
  @ApiDoc({
    summary: 'Get a channel recording',
    description: FORWARDED('recording-service', ManagementReadSubjects.channelRecordingGet) + NAMES,
    tags: ['Channel recordings'],
    response: ManagementChannelRecording,
    errors: [404, 503, 504],
    query: SELECT_DOC,
  })
  async get(
    @CurrentCaller() caller: Caller,
    @Param('applicationId') applicationId: string,
    @Param('channelId') channelId: string,
    @Param('channelRecordingId') recordingId: string,
    @Query() query: QueryParams,
  ) {
    const options = this.reads.singleQueryOptions(query, 'a channel recording read');
    const ref = await this.ref(caller, applicationId, channelId, recordingId);
    return this.reads.request(ManagementReadSubjects.channelRecordingGet, withQuery(ref, options));
  }

  @Delete(':applicationId/:channelId/:channelRecordingId')
  @ApiDoc({
    summary: 'Delete a channel recording',
    description: `Answers an empty object. ${FORWARDED('recording-service', ManagementReadSubjects.channelRecordingDelete)}`,
    tags: ['Channel recordings'],
    response: EmptyObject,
    status: 200,
    errors: [404, 503, 504],
    query: API_VERSION_DOC,
  })
  async remove(
    @CurrentCaller() caller: Caller,
    @Param('applicationId') applicationId: string,
    @Param('channelId') channelId: string,
    @Param('channelRecordingId') recordingId: string,
  ) {
    const ref = await this.ref(caller, applicationId, channelId, recordingId);
    await this.reads.request(ManagementReadSubjects.channelRecordingDelete, ref);
    return {};
  }

  @Get(':applicationId/:channelId/:channelRecordingId/MuxJson')
  @ApiDoc(readDoc('The JSON of the recording for the mux tool'))
  muxJson(
    @CurrentCaller() c: Caller,
    @Param('applicationId') a: string,
    @Param('channelId') ch: string,
    @Param('channelRecordingId') r: string,
  ) {
    return this.read(c, a, ch, r, 'MuxJson');
  }

  @Get(':applicationId/:channelId/:channelRecordingId/Url')
  @ApiDoc(readDoc('The URL of the recording'))
  url(
    @CurrentCaller() c: Caller,
    @Param('applicationId') a: string,
    @Param('channelId') ch: string,
    @Param('channelRecordingId') r: string,
  ) {
    return this.read(c, a, ch, r, 'Url');
  }

  @Get(':applicationId/:channelId/:channelRecordingId/AudioUrl')
  @ApiDoc(readDoc('The URL of the audio of the recording'))
  audioUrl(
    @CurrentCaller() c: Caller,
    @Param('applicationId') a: string,
    @Param('channelId') ch: string,
    @Param('channelRecordingId') r: string,
  ) {
    return this.read(c, a, ch, r, 'AudioUrl');
  }

  @Get(':applicationId/:channelId/:channelRecordingId/VideoUrl')
  @ApiDoc(readDoc('The URL of the video of the recording'))
  videoUrl(
    @CurrentCaller() c: Caller,
    @Param('applicationId') a: string,
    @Param('channelId') ch: string,
    @Param('channelRecordingId') r: string,
  ) {
    return this.read(c, a, ch, r, 'VideoUrl');
  }

  private async ref(caller: Caller, applicationId: string, channelId: string, recordingId: string) {
    const channelRecordingId = uuidParam(recordingId, 'channel recording');
    await this.reads.ownApplication(caller, applicationId);
    return { scope: this.reads.scope(caller), applicationId, channelId, channelRecordingId };
  }

  private async read(caller: Caller, applicationId: string, channelId: string, recordingId: string, what: ChannelRead) {
    const ref = await this.ref(caller, applicationId, channelId, recordingId);
    return { value: await this.reads.request(ManagementReadSubjects.channelRecordingRead, { ...ref, what }) };
  }
}

function readDoc(summary: string) {
  return {
    summary,
    description: `Answers \`{ "value": "<string>" }\`. Answered by recording-service. 404 when the application or the recording is not the organization's; 503/504 when recording-service is down/slow.`,
    tags: ['Channel recordings'],
    response: StringValueResponse,
    errors: [404, 503, 504],
    query: API_VERSION_DOC,
  };
}

@Controller('ConnectionRecordings')
export class ConnectionRecordingsController {
  constructor(private readonly reads: ForwardedReadsService) {}

  @Get(':applicationId')
  @ApiDoc({
    summary: 'Connection recordings of an application',
    description: FORWARDED('recording-service', ManagementReadSubjects.connectionRecordingsList) + NAMES,
    tags: ['Connection recordings'],
    response: ConnectionRecordingList,
    errors: [404, 503, 504],
    query: LIST_DOC,
  })
  async list(
    @CurrentCaller() caller: Caller,
    @Param('applicationId') applicationId: string,
    @Query() query: QueryParams,
  ) {
    const options = this.reads.listOptions(query, 'ConnectionRecordings');
    await this.reads.ownApplication(caller, applicationId);
    return listEnvelope(
      await this.reads.request(ManagementReadSubjects.connectionRecordingsList, {
        scope: this.reads.scope(caller),
        applicationId,
        query: options,
      }),
    );
  }

  @Get(':applicationId/:connectionRecordingId')
  @ApiDoc({
    summary: 'Get a connection recording',
    description: FORWARDED('recording-service', ManagementReadSubjects.connectionRecordingGet) + NAMES,
    tags: ['Connection recordings'],
    response: ConnectionRecording,
    errors: [404, 503, 504],
    query: SELECT_DOC,
  })
  async get(
    @CurrentCaller() caller: Caller,
    @Param('applicationId') applicationId: string,
    @Param('connectionRecordingId') recordingId: string,
    @Query() query: QueryParams,
  ) {
    const options = this.reads.singleQueryOptions(query, 'a connection recording read');
    return this.reads.request(
      ManagementReadSubjects.connectionRecordingGet,
      withQuery(await this.ref(caller, applicationId, recordingId), options),
    );
  }

  @Get(':applicationId/:connectionRecordingId/Url')
  @ApiDoc({ ...readDoc('The URL of the connection recording'), tags: ['Connection recordings'] })
  url(@CurrentCaller() c: Caller, @Param('applicationId') a: string, @Param('connectionRecordingId') r: string) {
    return this.read(c, a, r, 'Url');
  }

  @Get(':applicationId/:connectionRecordingId/AudioUrl')
  @ApiDoc({ ...readDoc('The URL of the audio of the connection recording'), tags: ['Connection recordings'] })
  audioUrl(@CurrentCaller() c: Caller, @Param('applicationId') a: string, @Param('connectionRecordingId') r: string) {
    return this.read(c, a, r, 'AudioUrl');
  }

  @Get(':applicationId/:connectionRecordingId/VideoUrl')
  @ApiDoc({ ...readDoc('The URL of the video of the connection recording'), tags: ['Connection recordings'] })
  videoUrl(@CurrentCaller() c: Caller, @Param('applicationId') a: string, @Param('connectionRecordingId') r: string) {
    return this.read(c, a, r, 'VideoUrl');
  }

  private async ref(caller: Caller, applicationId: string, recordingId: string) {
    const connectionRecordingId = uuidParam(recordingId, 'connection recording');
    await this.reads.ownApplication(caller, applicationId);
    return { scope: this.reads.scope(caller), applicationId, connectionRecordingId };
  }

  private async read(caller: Caller, applicationId: string, recordingId: string, what: ConnectionRead) {
    const ref = await this.ref(caller, applicationId, recordingId);
    return { value: await this.reads.request(ManagementReadSubjects.connectionRecordingRead, { ...ref, what }) };
  }
}

@Controller('RecordingStorage')
export class RecordingStorageController {
  constructor(private readonly reads: ForwardedReadsService) {}

  @Get('UsedSize')
  @ApiDoc({
    summary: 'Recording storage used by the whole organization, in bytes',
    description: `Answers \`{ "value": <bytes> }\`. ${FORWARDED('recording-service', ManagementReadSubjects.storageUsedSize)}`,
    tags: ['Recording storage'],
    response: NumberValueResponse,
    errors: [503, 504],
    query: SCALAR_DOC,
  })
  async organization(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    this.reads.scalarOptions(query, 'RecordingStorage/UsedSize');
    const applicationIds = await this.reads.applicationIds(caller);
    if (applicationIds.length === 0) return { value: 0 };
    return {
      value: await this.reads.request(ManagementReadSubjects.storageUsedSize, {
        scope: this.reads.scope(caller),
        applicationIds,
      }),
    };
  }

  @Get('UsedSize/:applicationId')
  @ApiDoc({
    summary: 'Recording storage used by one application, in bytes',
    description: `Answers \`{ "value": <bytes> }\`. ${FORWARDED('recording-service', ManagementReadSubjects.storageUsedSize)}`,
    tags: ['Recording storage'],
    response: NumberValueResponse,
    errors: [404, 503, 504],
    query: SCALAR_DOC,
  })
  async application(
    @CurrentCaller() caller: Caller,
    @Param('applicationId') applicationId: string,
    @Query() query: QueryParams,
  ) {
    this.reads.scalarOptions(query, 'RecordingStorage/UsedSize');
    await this.reads.ownApplication(caller, applicationId);
    return {
      value: await this.reads.request(ManagementReadSubjects.storageUsedSize, {
        scope: this.reads.scope(caller),
        applicationIds: [applicationId],
      }),
    };
  }
}
