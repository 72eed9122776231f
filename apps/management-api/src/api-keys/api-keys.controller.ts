import { Body, Controller, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiKey, ApiKeyCreateBody, ApiKeyList, ApiKeyUpdateBody } from '@switchboard/contracts';
import type { QueryParams } from '@switchboard/odata';
import { ApiDoc } from '@switchboard/service-kit';
import { CurrentCaller, type Caller } from '../auth/caller.js';
import { readBody } from '../common/bodies.js';
import { parseListQuery, parseSingleQuery } from '../common/odata-query.js';
import { entitySetDocs } from '../common/entity-set-docs.js';
import { apiKeyModel } from './api-key.model.js';
import { ApiKeysService } from './api-keys.service.js';

const docs = entitySetDocs('API keys');
const DISABLE_DOC =
  '`disabled: true` disables the key, `false` enables it again. A disabled key is refused with the 401 of an unknown key on both interfaces ' +
  "(a gateway drops its cached verdicts of the organization's keys on the `management-api.v1.organizations.changed` notice, " +
  'at the latest after API_KEY_CACHE_TTL_MS). A key cannot disable itself (409).';

@Controller('ApiKeys')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Get()
  @ApiDoc(docs.list("List the API keys of the caller's organization (key values are never returned)", ApiKeyList))
  list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    return this.keys.list(caller, parseListQuery(query, apiKeyModel));
  }

  @Post()
  @HttpCode(201)
  @ApiDoc(
    docs.create('Create an API key; the answer is the only time its value is shown', ApiKeyCreateBody, ApiKey, {
      description: 'Only a SHA-256 hash of the key is stored; the change log reads `<redacted>` for it.',
    }),
  )
  create(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    return this.keys.create(caller, readBody(ApiKeyCreateBody, body).tag ?? null);
  }

  @Get(':id')
  @ApiDoc(docs.get('Get an API key', ApiKey))
  get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    return this.keys.get(caller, id, parseSingleQuery(query, apiKeyModel));
  }

  @Put(':id')
  @ApiDoc(
    docs.update(
      'Update an API key (its tag, an absent tag becomes null; `disabled`, kept when absent)',
      ApiKeyUpdateBody,
      ApiKey,
      {
        description: DISABLE_DOC,
        errors: [404, 409],
      },
    ),
  )
  replace(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.keys.update(caller, id, readBody(ApiKeyUpdateBody, body), 'replace');
  }

  @Patch(':id')
  @ApiDoc(
    docs.update('Partially update an API key (`{ "disabled": true }` disables it)', ApiKeyUpdateBody, ApiKey, {
      description: DISABLE_DOC,
      errors: [404, 409],
    }),
  )
  patch(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.keys.update(caller, id, readBody(ApiKeyUpdateBody, body), 'merge');
  }
}
