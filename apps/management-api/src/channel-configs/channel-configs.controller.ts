import { Body, Controller, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import {
  ChannelConfig,
  ChannelConfigCreateBody,
  ChannelConfigList,
  ChannelConfigUpdateBody,
} from '@switchboard/contracts';
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
import { singleParam } from '../common/parent-param.js';
import { channelConfigModel } from './channel-config.model.js';
import { ChannelConfigsService } from './channel-configs.service.js';

const tags = ['Channel configs'];

@Controller('ChannelConfigs')
export class ChannelConfigsController {
  constructor(private readonly configs: ChannelConfigsService) {}

  @Get()
  @ApiDoc({
    summary: 'List channel configs',
    description:
      'With `applicationConfigId`, the channel configs of that application config (404 when the organization has no such config). ' +
      'Nested settings filter by path (`codec/vp8/disabled eq true`); `videoEncodings` and `webhooks` are navigation properties (`webhooks` null unless expanded).',
    tags,
    response: ChannelConfigList,
    errors: [404],
    query: [
      {
        name: 'applicationConfigId',
        description: 'The application config whose channel configs are listed.',
        schema: { type: 'string' },
      },
      ...LIST_QUERY_DOC,
    ],
  })
  list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    return this.configs.list(
      caller,
      parseListQuery(query, channelConfigModel),
      singleParam(query, 'applicationConfigId'),
    );
  }

  @Post()
  @HttpCode(201)
  @ApiDoc({
    summary: 'Create a channel config',
    description:
      '`channelIdPattern` is a channel id or `*`; at most 3 `videoEncodings`; one `default` config per application config (409 for a second). ' +
      "Inline `webhooks` are created with the config, and the answer shows them as written (in the body's order; `webhooks` is null when the body has none). The RTMP `secretKey` reads `<redacted>` in the change log.",
    tags,
    body: ChannelConfigCreateBody,
    response: ChannelConfig,
    status: 201,
    errors: [409],
    query: API_VERSION_DOC,
  })
  create(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    return this.configs.create(caller, readBody(ChannelConfigCreateBody, body));
  }

  @Get(':id')
  @ApiDoc({ summary: 'Get a channel config', tags, response: ChannelConfig, errors: [404], query: SINGLE_QUERY_DOC })
  get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    return this.configs.get(caller, id, parseSingleQuery(query, channelConfigModel));
  }

  @Put(':id')
  @ApiDoc({
    summary: 'Replace a channel config',
    description:
      'Every writable field is replaced: absent ones take their defaults (`default` false, `priority` 0, `bandwidthAdaptationPolicy` `Enabled`, empty settings objects, no video encodings); ' +
      'absent `applicationConfigId` and `channelIdPattern` are kept. Nested settings objects are replaced whole. `webhooks` as for application configs (the answer shows them as written when the body has them, otherwise null).',
    tags,
    body: ChannelConfigUpdateBody,
    response: ChannelConfig,
    errors: [404, 409],
    query: API_VERSION_DOC,
  })
  replace(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.configs.update(caller, id, readBody(ChannelConfigUpdateBody, body), 'replace');
  }

  @Patch(':id')
  @ApiDoc({
    summary: 'Partially update a channel config (top-level fields given are replaced)',
    tags,
    body: ChannelConfigUpdateBody,
    response: ChannelConfig,
    errors: [404, 409],
    query: API_VERSION_DOC,
  })
  patch(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.configs.update(caller, id, readBody(ChannelConfigUpdateBody, body), 'merge');
  }
}
