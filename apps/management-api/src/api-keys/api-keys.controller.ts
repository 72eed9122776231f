import { Body, Controller, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiKey, ApiKeyCreateBody, ApiKeyList, ApiKeyUpdateBody } from '@switchboard/contracts';
import type { QueryParams } from '@switchboard/odata';
import { ApiDoc } from '@switchboard/service-kit';
import { CurrentCaller, type Caller } from '../auth/caller.js';
import { readBody } from '../common/bodies.js';
import {
  API_VERSION_DOC,
  LIST_QUERY_DOC,
  parseListQuery,
  parseSingleQuery,
  SINGLE_QUERY_DOC,
} from '../common/odata-query.js';
import { apiKeyModel } from './api-key.model.js';
import { ApiKeysService } from './api-keys.service.js';

const tags = ['API keys'];

@Controller('ApiKeys')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Get()
  @ApiDoc({
    summary: "List the API keys of the caller's organization (key values are never returned)",
    tags,
    response: ApiKeyList,
    query: LIST_QUERY_DOC,
  })
  list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    return this.keys.list(caller, parseListQuery(query, apiKeyModel));
  }

  @Post()
  @HttpCode(201)
  @ApiDoc({
    summary: 'Create an API key; the answer is the only time its value is shown',
    description: 'Only a SHA-256 hash of the key is stored; the change log reads `<redacted>` for it.',
    tags,
    body: ApiKeyCreateBody,
    response: ApiKey,
    status: 201,
    query: API_VERSION_DOC,
  })
  create(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    return this.keys.create(caller, readBody(ApiKeyCreateBody, body).tag ?? null);
  }

  @Get(':id')
  @ApiDoc({ summary: 'Get an API key', tags, response: ApiKey, errors: [404], query: SINGLE_QUERY_DOC })
  get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    return this.keys.get(caller, id, parseSingleQuery(query, apiKeyModel));
  }

  @Put(':id')
  @ApiDoc({
    summary: 'Update an API key (its tag; an absent tag becomes null)',
    tags,
    body: ApiKeyUpdateBody,
    response: ApiKey,
    errors: [404],
    query: API_VERSION_DOC,
  })
  replace(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.keys.update(caller, id, readBody(ApiKeyUpdateBody, body), 'replace');
  }

  @Patch(':id')
  @ApiDoc({
    summary: 'Partially update an API key',
    tags,
    body: ApiKeyUpdateBody,
    response: ApiKey,
    errors: [404],
    query: API_VERSION_DOC,
  })
  patch(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.keys.update(caller, id, readBody(ApiKeyUpdateBody, body), 'merge');
  }
}
