import { Body, Controller, Get, HttpCode, Param, Patch, Post, Put } from '@nestjs/common';
import { ApiKey, ApiKeyCreateBody, ApiKeyUpdateBody, validator } from '@switchboard/contracts';
import { ApiDoc } from '@switchboard/service-kit';
import { CurrentCaller, type Caller } from '../auth/caller.js';
import { ODataList } from '../http/odata-list.js';
import { ApiKeysService } from './api-keys.service.js';

const ApiKeyList = ODataList(ApiKey, 'ApiKey');

const validateCreate = validator(ApiKeyCreateBody);
const validateUpdate = validator(ApiKeyUpdateBody);

@Controller('ApiKeys')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Get()
  @ApiDoc({ summary: 'List the API keys of the caller\'s organization (key values are never returned)', tags: ['API keys'], response: ApiKeyList })
  async list(@CurrentCaller() caller: Caller) {
    return { value: await this.keys.list(caller) };
  }

  @Post()
  @HttpCode(201)
  @ApiDoc({ summary: 'Create an API key; the answer is the only time its value is shown', tags: ['API keys'], body: ApiKeyCreateBody, response: ApiKey, status: 201 })
  async create(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    const input = validateCreate.parse(body ?? {});
    return this.keys.create(caller, input.tag ?? null);
  }

  @Get(':id')
  @ApiDoc({ summary: 'Get an API key', tags: ['API keys'], response: ApiKey, errors: [404] })
  async get(@CurrentCaller() caller: Caller, @Param('id') id: string) {
    return this.keys.get(caller, id);
  }

  @Put(':id')
  @ApiDoc({ summary: 'Update an API key (its tag)', tags: ['API keys'], body: ApiKeyUpdateBody, response: ApiKey, errors: [404] })
  async replace(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    const input = validateUpdate.parse(body ?? {});
    return this.keys.update(caller, id, input.tag ?? null);
  }

  @Patch(':id')
  @ApiDoc({ summary: 'Partially update an API key', tags: ['API keys'], body: ApiKeyUpdateBody, response: ApiKey, errors: [404] })
  async patch(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    const input = validateUpdate.parse(body ?? {});
    const current = await this.keys.get(caller, id);
    return this.keys.update(caller, id, input.tag === undefined ? current.tag : input.tag);
  }
}
