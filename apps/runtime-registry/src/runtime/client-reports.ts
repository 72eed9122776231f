import { Inject, Injectable } from '@nestjs/common';
import { DomainError, type ClientRef, type EdgeResults } from '@switchboard/contracts';
import { EventPublisher } from '../events/event-publisher.js';
import type { Delivery } from '../events/pusher.js';
import { domainEvent, messagePart } from '../model/events.js';
import { mediaStats, parseJson, type ClientRecord } from '../model/records.js';
import { clientMessageTarget } from '../model/targets.js';
import { LiveReads } from '../store/live-reads.js';
import { LiveStore } from '../store/live-store.js';
import { ChangeDelivery, type ChangeEffects } from './change-delivery.js';
import { CLIENT_CAUSE, clientOf } from './connection-events.js';
import { fromClient, pushTarget, type Report } from './edge-steps.js';
import { Recipients } from './recipients.js';

/**
 * The client reports that emit on every run, so they are not journaled: alias and tag patches,
 * messages from a client, client statistics.
 */
@Injectable()
export class ClientReports {
  constructor(
    @Inject(LiveStore) private readonly store: Pick<LiveStore, 'clientPatch'>,
    @Inject(LiveReads) private readonly reads: Pick<LiveReads, 'sender'>,
    private readonly recipients: Recipients,
    private readonly events: EventPublisher,
    @Inject(ChangeDelivery) private readonly effects: ChangeEffects,
  ) {}

  async update(r: Report<'client.update'>): Promise<EdgeResults['client.update']> {
    const set: Record<string, string> = {};
    const del: string[] = [];
    for (const field of ['userAlias', 'deviceAlias', 'tag'] as const) {
      const v = r[field];
      if (v === undefined) continue;
      if (v === null) del.push(field);
      else set[field] = v;
    }
    const a = r.client.applicationId;
    const result = await this.store.clientPatch(a, r.client, set, del);
    const owner = { applicationId: a, organizationId: result.organizationId };
    await this.events.publish([
      domainEvent(owner, 'client.updated', CLIENT_CAUSE, { client: clientOf(r.client, result.client) }),
    ]);
    return { ok: true };
  }

  /** A client's message: in a channel (to all, or a user, device or client of it), or to a user, device or client. */
  async message(r: Report<'client.message'>): Promise<EdgeResults['client.message']> {
    const a = r.client.applicationId;
    const sender = await this.senderOf(r.client, r.channelId);
    const owner = { applicationId: a, organizationId: sender.organizationId };
    const target = clientMessageTarget(a, r.channelId, r.to);
    let deliveries: Delivery[] = [];
    if (target) {
      const recipients = await this.recipients.resolve(target, { allowEmpty: true });
      const from = fromClient(sender.client);
      deliveries = recipients
        .filter((c) => !sameClient(c, r.client))
        .map((c) => ({
          gatewayId: c.gatewayId,
          client: pushTarget(a, c),
          push: { type: 'message', channelId: r.channelId, message: r.message, from },
        }));
    }
    const type = r.channelId ? 'channel.client.message' : 'client.message';
    const event = domainEvent(owner, type, CLIENT_CAUSE, {
      channelId: r.channelId,
      client: sender.client,
      message: messagePart(r.message, sender.client),
    });
    await this.effects.deliver(deliveries, [event]);
    return { delivered: deliveries.length };
  }

  async stats(r: Report<'client.stats'>): Promise<EdgeResults['client.stats']> {
    const a = r.client.applicationId;
    const sender = await this.senderOf(r.client, null);
    const owner = { applicationId: a, organizationId: sender.organizationId };
    const now = Date.now();
    const part = { client: sender.client, clientStats: mediaStats(r.stats, now, true) };
    await this.events.publish([domainEvent(owner, 'client.stats', CLIENT_CAUSE, part, now)]);
    return { ok: true };
  }

  /** The sender of a message or statistics: registered, and in a channel a member its claim lets send. */
  private async senderOf(
    c: ClientRef,
    channelId: string | null,
  ): Promise<{ client: ClientRecord; organizationId: string }> {
    const { registration, organizationId, claim } = await this.reads.sender(c, channelId);
    if (Object.keys(registration).length === 0)
      throw new DomainError('NotFound', `Client '${c.clientId}' is not registered.`);
    if (channelId !== null) {
      if (!claim) throw new DomainError('NotFound', `Client '${c.clientId}' has not joined channel '${channelId}'.`);
      if (parseJson<{ disableSendMessage?: boolean }>(claim, {}).disableSendMessage === true) {
        throw new DomainError(
          'Forbidden',
          `The channel claim of client '${c.clientId}' does not allow sending messages in channel '${channelId}'.`,
        );
      }
    }
    return { client: clientOf(c, registration), organizationId: organizationId ?? '' };
  }
}

function sameClient(a: { userId: string; deviceId: string; clientId: string }, b: ClientRef): boolean {
  return a.userId === b.userId && a.deviceId === b.deviceId && a.clientId === b.clientId;
}
