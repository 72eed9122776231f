import { Controller, HttpCode, Patch } from '@nestjs/common';
import { MediaServer, MediaServerPatch, MediaServerStatistics, type CallerScope } from '@switchboard/contracts';
import { ApiDoc } from '@switchboard/service-kit';
import { OperatorOnly } from '../auth/operator.guard.js';
import { Scope } from '../auth/scope.decorator.js';
import { MediaServerList, MediaServerStatisticsList } from '../http/doc-schemas.js';
import { UuidParam, ValidBody } from '../http/params.js';
import { ADMIN_PREFIXES } from '../http/prefixes.js';
import { GetJson } from '../http/routes.js';
import { RuntimeClient } from '../runtime/runtime.client.js';

const tags = ['Media servers'];
const errors = [403, 404, 503, 504];

/** Media servers serve every organization: operator credential only. */
@OperatorOnly()
@Controller(ADMIN_PREFIXES.map((p) => `${p}/mediaservers`))
export class MediaServersController {
  constructor(private readonly runtime: RuntimeClient) {}

  @GetJson()
  @ApiDoc({
    summary: 'List all active and inactive media servers (operator credential)',
    tags,
    response: MediaServerList,
    errors: [403, 503, 504],
  })
  list(@Scope() scope: CallerScope) {
    return this.runtime.query(scope, 'mediaservers.list', {});
  }

  @GetJson('stats')
  @ApiDoc({
    summary: 'Connection statistics of all media servers (operator credential)',
    tags,
    response: MediaServerStatisticsList,
    errors: [403, 503, 504],
  })
  statsOfAll(@Scope() scope: CallerScope) {
    return this.runtime.query(scope, 'mediaservers.stats', {});
  }

  @GetJson(':mediaServerId')
  @ApiDoc({ summary: 'Get a media server (operator credential)', tags, response: MediaServer, errors })
  get(@Scope() scope: CallerScope, @UuidParam('mediaServerId') mediaServerId: string) {
    return this.runtime.query(scope, 'mediaserver.get', { mediaServerId });
  }

  @Patch(':mediaServerId')
  @HttpCode(204)
  @ApiDoc({
    summary: 'Enable or disable a media server (operator credential)',
    description: 'A disabled media server (`active: false`) takes no new connections; the ones it holds stay.',
    tags,
    body: MediaServerPatch,
    status: 204,
    errors: [...errors, 413],
  })
  async update(
    @Scope() scope: CallerScope,
    @UuidParam('mediaServerId') mediaServerId: string,
    @ValidBody(MediaServerPatch) patch: MediaServerPatch,
  ) {
    await this.runtime.command(scope, { kind: 'mediaserver.update', mediaServerId, patch });
  }

  @GetJson(':mediaServerId/stats')
  @ApiDoc({
    summary: 'Connection statistics of a media server (operator credential)',
    tags,
    response: MediaServerStatistics,
    errors,
  })
  stats(@Scope() scope: CallerScope, @UuidParam('mediaServerId') mediaServerId: string) {
    return this.runtime.query(scope, 'mediaserver.stats', { mediaServerId });
  }
}
