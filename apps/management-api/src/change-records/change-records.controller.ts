import { Controller, Get, Param, Query } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { CHANGE_TYPES, ChangeRecord, ChangeRecordList } from '@switchboard/contracts';
import type { QueryParams } from '@switchboard/odata';
import { ApiDoc } from '@switchboard/service-kit';
import type { DataSource } from 'typeorm';
import { CurrentCaller, type Caller } from '../auth/caller.js';
import { LIST_QUERY_DOC, parseListQuery, parseSingleQuery } from '../common/odata-query.js';
import { entitySetDocs } from '../common/entity-set-docs.js';
import { RecordReader } from '../common/record-reader.js';
import { CHANGE_RECORDS, changeRecordModel } from './change-record.model.js';

const docs = entitySetDocs('Change records');

/** The change log (read-only): one record per changed property, written with the change. */
@Controller('ChangeRecords')
export class ChangeRecordsController {
  private readonly reader = new RecordReader(CHANGE_RECORDS);

  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  @Get()
  @ApiDoc({
    summary: "Query the organization's change log",
    description:
      `\`type\` is ${CHANGE_TYPES.map((t) => `\`${t}\``).join(', ')}; ` +
      'values are text (objects as JSON); secrets (shared secrets, API key values, RTMP stream keys) read `<redacted>`. ' +
      'Without `$orderby` the records come in the order they were written.',
    tags: docs.tags,
    response: ChangeRecordList,
    query: LIST_QUERY_DOC,
  })
  list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    return this.reader.list(this.ds, caller, parseListQuery(query, changeRecordModel));
  }

  @Get(':id')
  @ApiDoc(docs.get('Get a change record', ChangeRecord))
  get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    return this.reader.one(this.ds, caller, id, parseSingleQuery(query, changeRecordModel));
  }
}
