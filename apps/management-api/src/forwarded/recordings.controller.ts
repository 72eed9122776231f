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
import { Type, type TSchema } from '@sinclair/typebox';
import type { QueryParams } from '@switchboard/odata';
import { ApiDoc, type ApiDocOptions } from '@switchboard/service-kit';
import { CurrentCaller, type Caller } from '../auth/caller.js';
import { API_VERSION_DOC, SINGLE_QUERY_DOC } from '../common/odata-query.js';
import {
  FORWARDED_LIST_QUERY_DOC,
  FORWARDED_SINGLE_QUERY_DOC,
  forwardedNamesDoc,
  ForwardedReadsService,
  uuidParam,
  withQuery,
} from './forwarded-reads.service.js';

const FORWARDED = (service: string, subject: string) =>
  `Answered by ${service} (\`${subject}\`) with the OData options passed through. 404 when the application (or the recording) is not the organization's; 503 when ${service} is down, 504 when it is slow.`;
const NAMES = forwardedNamesDoc('recording');
const EmptyObject = Type.Object(
  {},
  { $id: 'EmptyObject', additionalProperties: false, description: 'An empty object.' },
);
const CHANNEL_TAG = 'Channel recordings';
const CONNECTION_TAG = 'Connection recordings';

type ChannelRead = (typeof CHANNEL_RECORDING_READS)[number];
type ConnectionRead = (typeof CONNECTION_RECORDING_READS)[number];

/** OpenAPI of a list (`query` FORWARDED_LIST_QUERY_DOC) or single read of recordings, forwarded on `subject`. */
function recordingReadDoc(
  tag: string,
  summary: string,
  subject: string,
  response: TSchema,
  query = FORWARDED_SINGLE_QUERY_DOC,
): ApiDocOptions {
  return {
    summary,
    description: FORWARDED('recording-service', subject) + NAMES,
    tags: [tag],
    response,
    errors: [404, 503, 504],
    query,
  };
}

/** OpenAPI of a `{ value: <string> }` read of one recording (its URLs, its mux JSON). */
function valueReadDoc(tag: string, summary: string): ApiDocOptions {
  return {
    summary,
    description: `Answers \`{ "value": "<string>" }\`. Answered by recording-service. 404 when the application or the recording is not the organization's; 503/504 when recording-service is down/slow.`,
    tags: [tag],
    response: StringValueResponse,
    errors: [404, 503, 504],
    query: API_VERSION_DOC,
  };
}

@Controller('ChannelRecordings')
export class ChannelRecordingsController {
  constructor(private readonly reads: ForwardedReadsService) {}

  @Get(':applicationId')
  @ApiDoc(
    recordingReadDoc(
      CHANNEL_TAG,
      'Channel recordings of an application',
      ManagementReadSubjects.channelRecordingsList,
      ManagementChannelRecordingList,
      FORWARDED_LIST_QUERY_DOC,
    ),
  )
  list(@CurrentCaller() caller: Caller, @Param('applicationId') applicationId: string, @Query() query: QueryParams) {
    const subject = ManagementReadSubjects.channelRecordingsList;
    return this.reads.listOfApplication(caller, applicationId, query, 'ChannelRecordings', subject);
  }

  @Get(':applicationId/:channelId/:channelRecordingId')
  @ApiDoc(
    recordingReadDoc(
      CHANNEL_TAG,
      'Get a channel recording',
      ManagementReadSubjects.channelRecordingGet,
      ManagementChannelRecording,
    ),
  )
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
    tags: [CHANNEL_TAG],
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
  @ApiDoc(valueReadDoc(CHANNEL_TAG, 'The JSON of the recording for the mux tool'))
  muxJson(@CurrentCaller() caller: Caller, @Param() path: ChannelRecordingPath) {
    return this.read(caller, path, 'MuxJson');
  }

  @Get(':applicationId/:channelId/:channelRecordingId/Url')
  @ApiDoc(valueReadDoc(CHANNEL_TAG, 'The URL of the recording'))
  url(@CurrentCaller() caller: Caller, @Param() path: ChannelRecordingPath) {
    return this.read(caller, path, 'Url');
  }

  @Get(':applicationId/:channelId/:channelRecordingId/AudioUrl')
  @ApiDoc(valueReadDoc(CHANNEL_TAG, 'The URL of the audio of the recording'))
  audioUrl(@CurrentCaller() caller: Caller, @Param() path: ChannelRecordingPath) {
    return this.read(caller, path, 'AudioUrl');
  }

  @Get(':applicationId/:channelId/:channelRecordingId/VideoUrl')
  @ApiDoc(valueReadDoc(CHANNEL_TAG, 'The URL of the video of the recording'))
  videoUrl(@CurrentCaller() caller: Caller, @Param() path: ChannelRecordingPath) {
    return this.read(caller, path, 'VideoUrl');
  }

  private async ref(caller: Caller, applicationId: string, channelId: string, recordingId: string) {
    const channelRecordingId = uuidParam(recordingId, 'channel recording');
    await this.reads.ownApplication(caller, applicationId);
    return { scope: this.reads.scope(caller), applicationId, channelId, channelRecordingId };
  }

  private async read(caller: Caller, path: ChannelRecordingPath, what: ChannelRead) {
    const ref = await this.ref(caller, path.applicationId, path.channelId, path.channelRecordingId);
    return { value: await this.reads.request(ManagementReadSubjects.channelRecordingRead, { ...ref, what }) };
  }
}

/** The path parameters naming one channel recording. */
interface ChannelRecordingPath {
  applicationId: string;
  channelId: string;
  channelRecordingId: string;
}

/** The path parameters naming one connection recording. */
interface ConnectionRecordingPath {
  applicationId: string;
  connectionRecordingId: string;
}

@Controller('ConnectionRecordings')
export class ConnectionRecordingsController {
  constructor(private readonly reads: ForwardedReadsService) {}

  @Get(':applicationId')
  @ApiDoc(
    recordingReadDoc(
      CONNECTION_TAG,
      'Connection recordings of an application',
      ManagementReadSubjects.connectionRecordingsList,
      ConnectionRecordingList,
      FORWARDED_LIST_QUERY_DOC,
    ),
  )
  list(@CurrentCaller() caller: Caller, @Param('applicationId') applicationId: string, @Query() query: QueryParams) {
    const subject = ManagementReadSubjects.connectionRecordingsList;
    return this.reads.listOfApplication(caller, applicationId, query, 'ConnectionRecordings', subject);
  }

  @Get(':applicationId/:connectionRecordingId')
  @ApiDoc(
    recordingReadDoc(
      CONNECTION_TAG,
      'Get a connection recording',
      ManagementReadSubjects.connectionRecordingGet,
      ConnectionRecording,
    ),
  )
  async get(@CurrentCaller() caller: Caller, @Param() path: ConnectionRecordingPath, @Query() query: QueryParams) {
    const options = this.reads.singleQueryOptions(query, 'a connection recording read');
    const ref = await this.ref(caller, path);
    return this.reads.request(ManagementReadSubjects.connectionRecordingGet, withQuery(ref, options));
  }

  @Get(':applicationId/:connectionRecordingId/Url')
  @ApiDoc(valueReadDoc(CONNECTION_TAG, 'The URL of the connection recording'))
  url(@CurrentCaller() caller: Caller, @Param() path: ConnectionRecordingPath) {
    return this.read(caller, path, 'Url');
  }

  @Get(':applicationId/:connectionRecordingId/AudioUrl')
  @ApiDoc(valueReadDoc(CONNECTION_TAG, 'The URL of the audio of the connection recording'))
  audioUrl(@CurrentCaller() caller: Caller, @Param() path: ConnectionRecordingPath) {
    return this.read(caller, path, 'AudioUrl');
  }

  @Get(':applicationId/:connectionRecordingId/VideoUrl')
  @ApiDoc(valueReadDoc(CONNECTION_TAG, 'The URL of the video of the connection recording'))
  videoUrl(@CurrentCaller() caller: Caller, @Param() path: ConnectionRecordingPath) {
    return this.read(caller, path, 'VideoUrl');
  }

  private async ref(caller: Caller, path: ConnectionRecordingPath) {
    const connectionRecordingId = uuidParam(path.connectionRecordingId, 'connection recording');
    await this.reads.ownApplication(caller, path.applicationId);
    return { scope: this.reads.scope(caller), applicationId: path.applicationId, connectionRecordingId };
  }

  private async read(caller: Caller, path: ConnectionRecordingPath, what: ConnectionRead) {
    const ref = await this.ref(caller, path);
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
    query: SINGLE_QUERY_DOC,
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
    query: SINGLE_QUERY_DOC,
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
