import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { QueryParams } from '@switchboard/odata';
import { ApiDoc } from '@switchboard/service-kit';
import type { DataSource } from 'typeorm';
import { CurrentCaller, type Caller } from '../auth/caller.js';
import { parseListQuery, parseSingleQuery, SINGLE_QUERY_DOC } from '../common/odata-query.js';
import { entitySetDocs } from '../common/entity-set-docs.js';
import { ParkedEvent, ParkedEventList, parkedEventModel } from './parked-event.model.js';
import { ParkedEventsService, requireOperator } from './parked-events.service.js';

const docs = entitySetDocs('Parked events');
const OPERATOR_ONLY = 'Operator credential only (403 otherwise). ';

/** Events durable consumers parked (dead letters), deployment-wide: list, read, replay. */
@Controller('ParkedEvents')
export class ParkedEventsController {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly parked: ParkedEventsService,
  ) {}

  @Get()
  @ApiDoc(
    docs.list('Query the parked events of every consumer', ParkedEventList, {
      description: `${OPERATOR_ONLY}An event is parked when its consumer could not process it within EVENT_MAX_ATTEMPTS deliveries, or could not read it; e.g. \`$filter=consumer eq 'webhook-worker' and status eq 'Parked'\`.`,
      errors: [403],
    }),
  )
  list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    requireOperator(caller);
    return this.parked.reader.list(this.ds, caller, parseListQuery(query, parkedEventModel));
  }

  @Get(':id')
  @ApiDoc({
    summary: 'Get a parked event',
    description: OPERATOR_ONLY,
    tags: docs.tags,
    response: ParkedEvent,
    errors: [403, 404],
    query: SINGLE_QUERY_DOC,
  })
  get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    requireOperator(caller);
    return this.parked.reader.one(this.ds, caller, id, parseSingleQuery(query, parkedEventModel));
  }

  @Post(':id/Replay')
  @HttpCode(200)
  @ApiDoc({
    summary: 'Replay a parked event',
    description:
      `${OPERATOR_ONLY}Hands the event to its consumer's processing again (after the cause was fixed). Answers the parked event: \`status\` \`Replayed\` when it went through, ` +
      'still `Parked` with the new `error` when it failed again. 409 when it was replayed already; 503/504 when the owning service does not answer.',
    tags: docs.tags,
    response: ParkedEvent,
    status: 200,
    errors: [403, 404, 409, 503, 504],
  })
  replay(@CurrentCaller() caller: Caller, @Param('id') id: string) {
    return this.parked.replay(caller, id);
  }
}
