import { Controller, Get, Query } from '@nestjs/common';
import { ManagementReadSubjects, UsageRecordList } from '@switchboard/contracts';
import type { QueryParams } from '@switchboard/odata';
import { ApiDoc } from '@switchboard/service-kit';
import { CurrentCaller, type Caller } from '../auth/caller.js';
import { invalid } from '../common/bodies.js';
import { singleParam } from '../common/parent-param.js';
import {
  FORWARDED_LIST_QUERY_DOC,
  forwardedNamesDoc,
  ForwardedReadsService,
  listEnvelope,
  timestampParam,
} from './forwarded-reads.service.js';

@Controller('Usage')
export class UsageController {
  constructor(private readonly reads: ForwardedReadsService) {}

  @Get()
  @ApiDoc({
    summary: 'Usage records of an application',
    description:
      'Answered by usage-aggregator (`usage-aggregator.v1.usage.list`) with the OData options passed through. `startTimestamp` (inclusive) and `endTimestamp` (exclusive) are Unix ms. ' +
      "404 when the application is not the organization's; 503 when the usage service is down, 504 when it is slow." +
      forwardedNamesDoc('usage record'),
    tags: ['Usage'],
    response: UsageRecordList,
    errors: [404, 503, 504],
    query: [
      { name: 'applicationId', description: 'The application.', schema: { type: 'string' }, required: true },
      {
        name: 'startTimestamp',
        description: 'Unix ms, inclusive.',
        schema: { type: 'integer', format: 'int64', minimum: 0 },
      },
      {
        name: 'endTimestamp',
        description: 'Unix ms, exclusive.',
        schema: { type: 'integer', format: 'int64', minimum: 0 },
      },
      ...FORWARDED_LIST_QUERY_DOC,
    ],
  })
  async list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    const applicationId = singleParam(query, 'applicationId');
    if (!applicationId) throw invalid('applicationId', 'is required');
    const startTimestamp = timestampParam(query, 'startTimestamp');
    const endTimestamp = timestampParam(query, 'endTimestamp');
    if (startTimestamp !== null && endTimestamp !== null && startTimestamp > endTimestamp)
      throw invalid('endTimestamp', 'must not be before startTimestamp');
    const options = this.reads.listOptions(query, 'Usage');
    await this.reads.ownApplication(caller, applicationId);
    return listEnvelope(
      await this.reads.request(ManagementReadSubjects.usageList, {
        scope: this.reads.scope(caller),
        applicationId,
        startTimestamp,
        endTimestamp,
        query: options,
      }),
    );
  }
}
