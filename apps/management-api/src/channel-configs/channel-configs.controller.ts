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
import { LIST_QUERY_DOC, parseListQuery, parseSingleQuery } from '../common/odata-query.js';
import { entitySetDocs } from '../common/entity-set-docs.js';
import { singleParam } from '../common/parent-param.js';
import { channelConfigModel } from './channel-config.model.js';
import { ChannelConfigsService } from './channel-configs.service.js';

const docs = entitySetDocs('Channel configs');

@Controller('ChannelConfigs')
export class ChannelConfigsController {
  constructor(private readonly configs: ChannelConfigsService) {}

  @Get()
  @ApiDoc(
    docs.list('List channel configs', ChannelConfigList, {
      description:
        'With `applicationConfigId`, the channel configs of that application config (404 when the organization has no such config). ' +
        'Nested settings filter by path (`codec/vp8/disabled eq true`); `videoEncodings` and `webhooks` are navigation properties (`webhooks` null unless expanded).',
      errors: [404],
      query: [
        {
          name: 'applicationConfigId',
          description: 'The application config whose channel configs are listed.',
          schema: { type: 'string' },
        },
        ...LIST_QUERY_DOC,
      ],
    }),
  )
  list(@CurrentCaller() caller: Caller, @Query() query: QueryParams) {
    return this.configs.list(
      caller,
      parseListQuery(query, channelConfigModel),
      singleParam(query, 'applicationConfigId'),
    );
  }

  @Post()
  @HttpCode(201)
  @ApiDoc(
    docs.create('Create a channel config', ChannelConfigCreateBody, ChannelConfig, {
      description:
        '`channelIdPattern` is a channel id or `*`; at most 3 `videoEncodings`; one `default` config per application config (409 for a second). ' +
        "Inline `webhooks` are created with the config, and the answer shows them as written (in the body's order; `webhooks` is null when the body has none). The RTMP `secretKey` reads `<redacted>` in the change log.",
      errors: [409],
    }),
  )
  create(@CurrentCaller() caller: Caller, @Body() body: unknown) {
    return this.configs.create(caller, readBody(ChannelConfigCreateBody, body));
  }

  @Get(':id')
  @ApiDoc(docs.get('Get a channel config', ChannelConfig))
  get(@CurrentCaller() caller: Caller, @Param('id') id: string, @Query() query: QueryParams) {
    return this.configs.get(caller, id, parseSingleQuery(query, channelConfigModel));
  }

  @Put(':id')
  @ApiDoc(
    docs.update('Replace a channel config', ChannelConfigUpdateBody, ChannelConfig, {
      description:
        'Every writable field is replaced: absent ones take their defaults (`default` false, `priority` 0, `bandwidthAdaptationPolicy` `Enabled`, empty settings objects, no video encodings); ' +
        'absent `applicationConfigId` and `channelIdPattern` are kept. Nested settings objects are replaced whole. `webhooks` as for application configs (the answer shows them as written when the body has them, otherwise null).',
      errors: [404, 409],
    }),
  )
  replace(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.configs.update(caller, id, readBody(ChannelConfigUpdateBody, body), 'replace');
  }

  @Patch(':id')
  @ApiDoc(
    docs.update(
      'Partially update a channel config (top-level fields given are replaced)',
      ChannelConfigUpdateBody,
      ChannelConfig,
      { errors: [404, 409] },
    ),
  )
  patch(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: unknown) {
    return this.configs.update(caller, id, readBody(ChannelConfigUpdateBody, body), 'merge');
  }
}
