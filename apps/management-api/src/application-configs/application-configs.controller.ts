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
import { parseListQuery, parseSingleQuery } from '../common/odata-query.js';
import { entitySetDocs } from '../common/entity-set-docs.js';
import { applicationConfigModel } from './application-config.model.js';
import { ApplicationConfigsService } from './application-configs.service.js';

const docs = entitySetDocs('Application configs');

@Controller('ApplicationConfigs')
export class ApplicationConfigsController {
  constructor(private readonly configs: ApplicationConfigsService) {}

  @Get()
  @ApiDoc(
    docs.list("List the organization's application configs", ApplicationConfigList, {
      description:
        '`webhooks` is a navigation property: null unless `$expand=webhooks` (nested options allowed). `sharedSecret` can be selected but not filtered or sorted.',
    }),
  )
  list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    return this.configs.list(caller, parseListQuery(query, applicationConfigModel));
  }

  @Post()
  @HttpCode(201)
  @ApiDoc(
    docs.create('Create an application config', ApplicationConfigCreateBody, ApplicationConfig, {
      description:
        '`applicationId` is required and unique across organizations (409 otherwise). A `sharedSecret` is generated when none is given. ' +
        "Inline `webhooks` are created with the config, and the answer shows them as written (in the body's order; `webhooks` is null when the body has none). The change log records every property, the shared secret as `<redacted>`.",
      errors: [409],
    }),
  )
  create(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    return this.configs.create(caller, readBody(ApplicationConfigCreateBody, body));
  }

  @Get(':id')
  @ApiDoc(docs.get('Get an application config', ApplicationConfig))
  get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    return this.configs.get(caller, id, parseSingleQuery(query, applicationConfigModel));
  }

  @Put(':id')
  @ApiDoc(
    docs.update('Replace an application config', ApplicationConfigUpdateBody, ApplicationConfig, {
      description:
        'Every writable field is replaced; absent `disabled` becomes false and absent `tag` null, while absent (or null) `applicationId` and `sharedSecret` are kept. ' +
        "`webhooks`: absent or null leaves the webhooks alone; a list becomes the webhooks (items with the `id` of one of them update it, items without `id` are created, the others are deleted); the answer shows them as written, in the body's order. " +
        'Without `webhooks` in the body the answer has `webhooks: null`, as a read without `$expand`.',
      errors: [404, 409],
    }),
  )
  replace(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.configs.update(caller, id, readBody(ApplicationConfigUpdateBody, body), 'replace');
  }

  @Patch(':id')
  @ApiDoc(
    docs.update(
      'Partially update an application config (only the fields given change)',
      ApplicationConfigUpdateBody,
      ApplicationConfig,
      { errors: [404, 409] },
    ),
  )
  patch(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.configs.update(caller, id, readBody(ApplicationConfigUpdateBody, body), 'merge');
  }
}
