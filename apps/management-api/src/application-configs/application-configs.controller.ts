import { Body, Controller, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import {
  ApplicationConfig,
  ApplicationConfigCreateBody,
  ApplicationConfigList,
  ApplicationConfigUpdateBody,
} from '@switchboard/contracts';
import type { QueryParams } from '@switchboard/odata';
import { ApiDoc } from '@switchboard/service-kit';
import { CurrentCaller, type Caller } from '../auth/caller.js';
import { readBody } from '../common/bodies.js';
import {
  LIST_QUERY_DOC,
  parseListQuery,
  parseSingleQuery,
  SINGLE_QUERY_DOC,
  API_VERSION_DOC,
} from '../common/odata-query.js';
import { applicationConfigModel } from './application-config.model.js';
import { ApplicationConfigsService } from './application-configs.service.js';

const tags = ['Application configs'];

@Controller('ApplicationConfigs')
export class ApplicationConfigsController {
  constructor(private readonly configs: ApplicationConfigsService) {}

  @Get()
  @ApiDoc({
    summary: "List the organization's application configs",
    description:
      '`webhooks` is a navigation property: null unless `$expand=webhooks` (nested options allowed). `sharedSecret` can be selected but not filtered or sorted.',
    tags,
    response: ApplicationConfigList,
    query: LIST_QUERY_DOC,
  })
  list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    return this.configs.list(caller, parseListQuery(query, applicationConfigModel));
  }

  @Post()
  @HttpCode(201)
  @ApiDoc({
    summary: 'Create an application config',
    description:
      '`applicationId` is required and unique across organizations (409 otherwise). A `sharedSecret` is generated when none is given. ' +
      "Inline `webhooks` are created with the config, and the answer shows them as written (in the body's order; `webhooks` is null when the body has none). The change log records every property, the shared secret as `<redacted>`.",
    tags,
    body: ApplicationConfigCreateBody,
    response: ApplicationConfig,
    status: 201,
    errors: [409],
    query: API_VERSION_DOC,
  })
  create(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    return this.configs.create(caller, readBody(ApplicationConfigCreateBody, body));
  }

  @Get(':id')
  @ApiDoc({
    summary: 'Get an application config',
    tags,
    response: ApplicationConfig,
    errors: [404],
    query: SINGLE_QUERY_DOC,
  })
  get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    return this.configs.get(caller, id, parseSingleQuery(query, applicationConfigModel));
  }

  @Put(':id')
  @ApiDoc({
    summary: 'Replace an application config',
    description:
      'Every writable field is replaced; absent `disabled` becomes false and absent `tag` null, while absent (or null) `applicationId` and `sharedSecret` are kept. ' +
      "`webhooks`: absent or null leaves the webhooks alone; a list becomes the webhooks (items with the `id` of one of them update it, items without `id` are created, the others are deleted); the answer shows them as written, in the body's order. " +
      'Without `webhooks` in the body the answer has `webhooks: null`, as a read without `$expand`.',
    tags,
    body: ApplicationConfigUpdateBody,
    response: ApplicationConfig,
    errors: [404, 409],
    query: API_VERSION_DOC,
  })
  replace(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.configs.update(caller, id, readBody(ApplicationConfigUpdateBody, body), 'replace');
  }

  @Patch(':id')
  @ApiDoc({
    summary: 'Partially update an application config (only the fields given change)',
    tags,
    body: ApplicationConfigUpdateBody,
    response: ApplicationConfig,
    errors: [404, 409],
    query: API_VERSION_DOC,
  })
  patch(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.configs.update(caller, id, readBody(ApplicationConfigUpdateBody, body), 'merge');
  }
}
