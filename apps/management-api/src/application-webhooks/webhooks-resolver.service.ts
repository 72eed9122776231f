import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  DomainError,
  selectChannelConfig,
  type ResolvedWebhook,
  type WebhooksResolveRequest,
  type WebhooksResolveResponse,
} from '@switchboard/contracts';
import type { DataSource } from 'typeorm';

interface WebhookRow {
  id: string;
  url: string | null;
  events: string[] | null;
  batch: boolean;
  reliable: boolean;
  disabled: boolean;
}

function resolved(row: WebhookRow, source: ResolvedWebhook['source']): ResolvedWebhook {
  return {
    id: row.id,
    source,
    url: row.url,
    events: row.events,
    batch: row.batch,
    reliable: row.reliable,
    disabled: row.disabled,
  };
}

/**
 * `management-api.v1.webhooks.resolve` (messaging/webhooks.ts): the webhooks an event of an
 * application (and channel) goes to. Internal, across organizations; read in one snapshot.
 */
@Injectable()
export class WebhooksResolverService {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  async resolve(request: WebhooksResolveRequest): Promise<WebhooksResolveResponse> {
    return this.ds.transaction('REPEATABLE READ', async (m) => {
      const apps = (await m.query(
        'SELECT id, organization_id, shared_secret, disabled FROM management.application_config WHERE application_id = $1',
        [request.applicationId],
      )) as Array<{
        id: string;
        organization_id: string;
        shared_secret: string;
        disabled: boolean | null;
      }>;
      const app = apps[0];
      if (!app) throw new DomainError('NotFound', `No application '${request.applicationId.slice(0, 128)}'.`);
      const answer: WebhooksResolveResponse = {
        organizationId: app.organization_id,
        sharedSecret: app.shared_secret,
        channelConfigId: null,
        webhooks: [],
      };
      const configs = (await m.query(
        'SELECT id, channel_id_pattern AS "channelIdPattern", priority, is_default AS "default" FROM management.channel_config WHERE application_config_id = $1 ORDER BY created_on, id',
        [app.id],
      )) as Array<{ id: string; channelIdPattern: string; priority: number; default: boolean }>;
      const governing = selectChannelConfig(configs, request.channelId);
      answer.channelConfigId = governing?.id ?? null;
      if (app.disabled === true) return answer;
      const columns = 'id, url, events, batch, reliable, disabled';
      const own = (await m.query(
        `SELECT ${columns} FROM management.application_webhook WHERE application_config_id = $1 ORDER BY created_on, id`,
        [app.id],
      )) as WebhookRow[];
      answer.webhooks.push(...own.map((w) => resolved(w, 'application')));
      if (governing) {
        const channel = (await m.query(
          `SELECT ${columns} FROM management.channel_webhook WHERE channel_config_id = $1 ORDER BY created_on, id`,
          [governing.id],
        )) as WebhookRow[];
        answer.webhooks.push(...channel.map((w) => resolved(w, 'channel')));
      }
      return answer;
    });
  }
}
