/**
 * Reads interface B serves from other services (usage-aggregator, recording-service, webhook-worker) over NATS:
 * 503 while nobody answers, the OData options passed through, tenancy settled before any request.
 * The answering services are faked here on the real NATS with the contract's subjects.
 */
import assert from 'node:assert/strict';
import { connect, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { testServers } from '@switchboard/testing';
import { randomUUID } from 'node:crypto';
import { expectODataError } from '../e2e/http.js';
import { insertOrganizationWithKey, q, startManagement, type Harness } from './support.js';

interface Packet {
  pattern: string;
  data: any;
  id: string;
}

describe('forwarded reads', () => {
  let h: Harness;
  let nc: NatsConnection;
  let applicationId: string;
  let foreignApplicationId: string;
  const recordingId = randomUUID();
  const subs: Subscription[] = [];
  const seen: Packet[] = [];

  beforeAll(async () => {
    h = await startManagement('forwarded');
    nc = await connect({ servers: testServers().natsUrl });
    applicationId = `${h.ns}-rec`.replace(/_/g, '-');
    foreignApplicationId = `${h.ns}-theirs`.replace(/_/g, '-');
    assert.equal((await h.api('POST', '/ApplicationConfigs', { body: { applicationId } })).status, 201);
    assert.equal(
      (await h.api('POST', '/ApplicationConfigs', { body: { applicationId: `${applicationId}-2` } })).status,
      201,
    );
    assert.equal(
      (await h.api('POST', '/ApplicationConfigs', { key: h.keyB, body: { applicationId: foreignApplicationId } }))
        .status,
      201,
    );
  });
  afterAll(async () => {
    await nc?.close();
    await h?.stop();
  });
  afterEach(async () => {
    for (const s of subs.splice(0)) s.unsubscribe();
    seen.length = 0;
    await nc.flush();
  });

  async function fake(name: string, answer: (data: any) => unknown) {
    subs.push(
      nc.subscribe(`${h.ns}.${name}`, {
        callback: (_e, msg: Msg) => {
          const packet = JSON.parse(new TextDecoder().decode(msg.data)) as Packet;
          seen.push(packet);
          const result = answer(packet.data);
          const reply =
            result && typeof result === 'object' && 'err' in result
              ? { id: packet.id, err: (result as { err: unknown }).err, isDisposed: true }
              : { id: packet.id, response: result, isDisposed: true };
          msg.respond(JSON.stringify(reply));
        },
      }),
    );
    await nc.flush();
  }

  it('answers 503 Unavailable (OData error body) while usage-aggregator and recording-service do not answer', async () => {
    const paths = [
      `/Usage${q({ applicationId })}`,
      `/ChannelRecordings/${applicationId}`,
      `/ChannelRecordings/${applicationId}/lobby/${recordingId}`,
      `/ChannelRecordings/${applicationId}/lobby/${recordingId}/MuxJson`,
      `/ChannelRecordings/${applicationId}/lobby/${recordingId}/Url`,
      `/ChannelRecordings/${applicationId}/lobby/${recordingId}/AudioUrl`,
      `/ChannelRecordings/${applicationId}/lobby/${recordingId}/VideoUrl`,
      `/ConnectionRecordings/${applicationId}`,
      `/ConnectionRecordings/${applicationId}/${recordingId}`,
      `/ConnectionRecordings/${applicationId}/${recordingId}/Url`,
      `/ConnectionRecordings/${applicationId}/${recordingId}/AudioUrl`,
      `/ConnectionRecordings/${applicationId}/${recordingId}/VideoUrl`,
      '/RecordingStorage/UsedSize',
      `/RecordingStorage/UsedSize/${applicationId}`,
    ];
    for (const path of paths) expectODataError(await h.api('GET', path), 503, 'Unavailable', null);
    expectODataError(
      await h.api('DELETE', `/ChannelRecordings/${applicationId}/lobby/${recordingId}`),
      503,
      'Unavailable',
      null,
    );
  });

  it('passes the usage query and its OData options through to usage-aggregator', async () => {
    const record = {
      id: randomUUID(),
      applicationId,
      startTimestamp: '2030-01-01T00:00:00Z',
      endTimestamp: '2030-01-02T00:00:00Z',
      participantMessages: 3,
      participantMinutes: [],
    };
    await fake('usage-aggregator.v1.usage.list', () => ({ '@odata.count': 1, value: [record] }));
    const answer = await h.api(
      'GET',
      `/Usage${q({ applicationId, startTimestamp: 1000, endTimestamp: 2000, $filter: 'participantMessages gt 1', $orderby: 'startTimestamp desc', $top: 5, $skip: 1, $count: true, $select: 'id' })}`,
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ '@odata.count': 1, value: [record] });
    expect(seen[0]!.pattern).toBe('usage-aggregator.v1.usage.list');
    expect(seen[0]!.data).toEqual({
      scope: { organizationId: h.orgA, operator: false, principal: expect.any(String) },
      applicationId,
      startTimestamp: 1000,
      endTimestamp: 2000,
      query: {
        $filter: 'participantMessages gt 1',
        $orderby: 'startTimestamp desc',
        $top: '5',
        $skip: '1',
        $count: 'true',
        $select: 'id',
      },
    });
    expectODataError(await h.api('GET', '/Usage'), 400, 'ValidationFailed', 'applicationId');
    expectODataError(
      await h.api('GET', `/Usage${q({ applicationId, startTimestamp: 'yesterday' })}`),
      400,
      'ValidationFailed',
      'startTimestamp',
    );
    expectODataError(
      await h.api('GET', `/Usage${q({ applicationId, startTimestamp: 5, endTimestamp: 4 })}`),
      400,
      'ValidationFailed',
      'endTimestamp',
    );
    expect(seen).toHaveLength(1);
  });

  /**
   * What recording-service answers to a single read: the record projected by `$select`, names bound
   * to the record's properties (an unknown one, or any `$expand`: the records have no navigation
   * properties, is refused with the OData code first in the detail message).
   */
  function asRecordingService(record: Record<string, unknown>, query: Record<string, string> | undefined) {
    for (const option of ['$select', '$expand'] as const) {
      const names = (query?.[option] ?? '').split(',').filter((n) => n !== '' && n !== '*');
      const unknown = option === '$expand' ? names[0] : names.find((n) => !(n in record));
      if (unknown)
        return {
          err: {
            code: 'ValidationFailed',
            message: `Unknown property '${unknown}'`,
            details: [{ field: option, message: `UnknownProperty: Unknown property '${unknown}' in ${option}` }],
          },
        };
    }
    const select = query?.$select?.split(',');
    return select ? Object.fromEntries(Object.entries(record).filter(([k]) => select.includes(k))) : record;
  }

  it('serves channel and connection recordings from recording-service, passing $select of single reads through', async () => {
    const recording = {
      id: recordingId,
      applicationId,
      channelId: 'lobby',
      ready: true,
      url: 'https://files.example.com/r.mp4',
    };
    await fake('recording-service.v1.channel-recordings.list', (data) => ({
      value: [recording],
      '@odata.count': 1,
      echo: data.query,
    }));
    await fake('recording-service.v1.channel-recordings.get', (data) =>
      data.channelRecordingId === recordingId
        ? asRecordingService(recording, data.query)
        : { err: { code: 'NotFound', message: 'No such recording' } },
    );
    await fake('recording-service.v1.channel-recordings.delete', () => null);
    await fake('recording-service.v1.channel-recordings.read', (data) => `${data.what}:${data.channelRecordingId}`);
    await fake('recording-service.v1.connection-recordings.list', () => ({ value: [] }));
    await fake('recording-service.v1.connection-recordings.get', (data) =>
      asRecordingService({ id: recordingId, connectionId: 'cn', audioUrl: 'a' }, data.query),
    );
    await fake('recording-service.v1.connection-recordings.read', (data) => `${data.what}`);
    await fake('recording-service.v1.storage.used-size', (data) => data.applicationIds.length * 1000);

    const list = await h.api(
      'GET',
      `/ChannelRecordings/${applicationId}${q({ $filter: 'ready eq true', $top: 10, $count: true })}`,
    );
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ '@odata.count': 1, value: [recording] });
    expect(seen.at(-1)!.data).toEqual({
      scope: expect.objectContaining({ organizationId: h.orgA }),
      applicationId,
      query: { $filter: 'ready eq true', $top: '10', $count: 'true' },
    });

    const one = await h.api(
      'GET',
      `/ChannelRecordings/${applicationId}/lobby/${recordingId}${q({ $select: 'id,url' })}`,
    );
    expect(one.body).toEqual({ id: recordingId, url: recording.url });
    expect(seen.at(-1)!.data).toEqual({
      scope: expect.any(Object),
      applicationId,
      channelId: 'lobby',
      channelRecordingId: recordingId,
      query: { $select: 'id,url' },
    });
    expect((await h.api('GET', `/ChannelRecordings/${applicationId}/lobby/${recordingId}`)).body).toEqual(recording);
    expect(seen.at(-1)!.data).toEqual({
      scope: expect.any(Object),
      applicationId,
      channelId: 'lobby',
      channelRecordingId: recordingId,
    });
    expectODataError(await h.api('GET', `/ChannelRecordings/${applicationId}/lobby/${randomUUID()}`), 404, 'NotFound');
    expectODataError(await h.api('GET', `/ChannelRecordings/${applicationId}/lobby/not-a-uuid`), 404, 'NotFound');
    const removed = await h.api('DELETE', `/ChannelRecordings/${applicationId}/lobby/${recordingId}`);
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({});
    for (const what of ['MuxJson', 'Url', 'AudioUrl', 'VideoUrl']) {
      expect((await h.api('GET', `/ChannelRecordings/${applicationId}/lobby/${recordingId}/${what}`)).body).toEqual({
        value: `${what}:${recordingId}`,
      });
    }

    expect((await h.api('GET', `/ConnectionRecordings/${applicationId}`)).body).toEqual({ value: [] });
    expect(
      (await h.api('GET', `/ConnectionRecordings/${applicationId}/${recordingId}${q({ $select: 'connectionId' })}`))
        .body,
    ).toEqual({ connectionId: 'cn' });
    expect(seen.at(-1)!.data).toEqual({
      scope: expect.any(Object),
      applicationId,
      connectionRecordingId: recordingId,
      query: { $select: 'connectionId' },
    });
    for (const what of ['Url', 'AudioUrl', 'VideoUrl'])
      expect((await h.api('GET', `/ConnectionRecordings/${applicationId}/${recordingId}/${what}`)).body).toEqual({
        value: what,
      });

    expect((await h.api('GET', '/RecordingStorage/UsedSize')).body).toEqual({ value: 2000 });
    expect(seen.at(-1)!.data.applicationIds.sort()).toEqual([applicationId, `${applicationId}-2`].sort());
    expect((await h.api('GET', `/RecordingStorage/UsedSize/${applicationId}${q({ $select: 'value' })}`)).body).toEqual({
      value: 1000,
    });
    // An organization without applications uses nothing; nobody needs asking.
    const { key } = await insertOrganizationWithKey(h.sql, 'no applications');
    const before = seen.length;
    expect((await h.api('GET', '/RecordingStorage/UsedSize', { key })).body).toEqual({ value: 0 });
    expect(seen).toHaveLength(before);
  });

  it("settles tenancy first: another organization's application is 404 and nothing is forwarded", async () => {
    await fake('recording-service.v1.channel-recordings.list', () => ({ value: [] }));
    await fake('usage-aggregator.v1.usage.list', () => ({ value: [] }));
    await fake('recording-service.v1.storage.used-size', () => 1);
    expectODataError(await h.api('GET', `/ChannelRecordings/${foreignApplicationId}`), 404, 'NotFound');
    expectODataError(await h.api('GET', `/Usage${q({ applicationId: foreignApplicationId })}`), 404, 'NotFound');
    expectODataError(await h.api('GET', `/RecordingStorage/UsedSize/${foreignApplicationId}`), 404, 'NotFound');
    expectODataError(await h.api('GET', `/ChannelRecordings/${applicationId}`, { key: h.keyB }), 404, 'NotFound');
    expect(seen).toEqual([]);
    expect((await h.api('GET', `/ChannelRecordings/${foreignApplicationId}`, { key: h.keyB })).status).toBe(200);
  });

  it("checks the grammar and limits of the options here, and maps the answering service's errors", async () => {
    await fake('recording-service.v1.channel-recordings.list', (data) =>
      data.query.$filter?.includes('colour')
        ? {
            err: {
              code: 'ValidationFailed',
              message: "Unknown property 'colour'",
              details: [{ field: '$filter', message: "Unknown property 'colour'" }],
            },
          }
        : { value: [] },
    );
    expectODataError(
      await h.api('GET', `/ChannelRecordings/${applicationId}${q({ $filter: "ready eq 'x" })}`),
      400,
      'QuerySyntaxError',
      '$filter',
    );
    expectODataError(
      await h.api('GET', `/ChannelRecordings/${applicationId}${q({ $top: 1001 })}`),
      400,
      'QueryLimitExceeded',
      '$top',
    );
    expectODataError(
      await h.api('GET', `/ChannelRecordings/${applicationId}${q({ $search: 'x' })}`),
      400,
      'QuerySyntaxError',
      '$search',
    );
    expect(seen).toEqual([]);
    expectODataError(
      await h.api('GET', `/ChannelRecordings/${applicationId}${q({ $filter: 'colour eq 1' })}`),
      400,
      'ValidationFailed',
      '$filter',
    );
    // The answering services put the OData code first in the detail message: it becomes the code.
    await fake('usage-aggregator.v1.usage.list', () => ({
      err: {
        code: 'ValidationFailed',
        message: 'Invalid query',
        details: [{ field: '$orderby', message: "UnknownProperty: Unknown property 'colour'" }],
      },
    }));
    const unknown = await h.api('GET', `/Usage${q({ applicationId, $orderby: 'colour' })}`);
    expectODataError(unknown, 400, 'UnknownProperty', '$orderby');
    expect(unknown.body.error.message).toBe("Unknown property 'colour'");
  });

  it('answers an unknown $select or $expand name on the recording reads with 400 UnknownProperty, like the other entity sets', async () => {
    const recording = { id: recordingId, applicationId, channelId: 'lobby', ready: true };
    await fake('recording-service.v1.channel-recordings.get', (data) => asRecordingService(recording, data.query));
    await fake('recording-service.v1.connection-recordings.get', (data) =>
      asRecordingService({ id: recordingId, connectionId: 'cn' }, data.query),
    );
    await fake('recording-service.v1.channel-recordings.list', (data) =>
      data.query.$expand ? asRecordingService(recording, { $expand: data.query.$expand }) : { value: [recording] },
    );
    await fake('recording-service.v1.connection-recordings.list', (data) =>
      data.query.$expand ? asRecordingService(recording, { $expand: data.query.$expand }) : { value: [] },
    );
    const channel = `/ChannelRecordings/${applicationId}/lobby/${recordingId}`;
    const connection = `/ConnectionRecordings/${applicationId}/${recordingId}`;
    for (const path of [channel, connection]) {
      const colour = await h.api('GET', `${path}${q({ $select: 'id,colour' })}`);
      expectODataError(colour, 400, 'UnknownProperty', '$select');
      expect(colour.body.error.message).toBe("Unknown property 'colour' in $select");
      expectODataError(
        await h.api('GET', `${path}${q({ $expand: 'connectionRecordings' })}`),
        400,
        'UnknownProperty',
        '$expand',
      );
    }
    for (const list of [`/ChannelRecordings/${applicationId}`, `/ConnectionRecordings/${applicationId}`]) {
      expectODataError(await h.api('GET', `${list}${q({ $expand: 'colour' })}`), 400, 'UnknownProperty', '$expand');
      expect(seen.at(-1)!.data.query).toEqual({ $expand: 'colour' });
    }
    // The same names on an entity set of this service: the same answer.
    const app = (await h.api('GET', '/ApplicationConfigs')).body.value[0];
    expectODataError(
      await h.api('GET', `/ApplicationConfigs/${app.id}${q({ $select: 'id,colour' })}`),
      400,
      'UnknownProperty',
      '$select',
    );
    expectODataError(
      await h.api('GET', `/ApplicationConfigs/${app.id}${q({ $expand: 'colour' })}`),
      400,
      'UnknownProperty',
      '$expand',
    );
    // Grammar and limits are still checked here, before anything is asked.
    const before = seen.length;
    expectODataError(await h.api('GET', `${channel}${q({ $expand: 'a(' })}`), 400, 'QuerySyntaxError', '$expand');
    expectODataError(
      await h.api('GET', `${channel}${q({ $expand: 'a($expand=b($expand=c))' })}`),
      400,
      'QueryLimitExceeded',
      '$expand',
    );
    expectODataError(await h.api('GET', `${channel}${q({ $select: 'id,' })}`), 400, 'QuerySyntaxError', '$select');
    expectODataError(await h.api('GET', `${channel}${q({ $filter: 'ready' })}`), 400, 'QuerySyntaxError', '$filter');
    expect(seen).toHaveLength(before);
  });

  /**
   * What a service binding forwarded options with `parseForwardedQuery` answers to `$expand` on a
   * record without navigation properties: `*` expands nothing, a name is refused as UnknownProperty.
   */
  function expandRefusal(query: Record<string, string> | undefined, entity: string) {
    const name = (query?.$expand ?? '').split(',').find((n) => n !== '' && n !== '*');
    if (!name) return undefined;
    const message = `Unknown navigation property '${name}' in $expand of ${entity}`;
    return {
      err: {
        code: 'ValidationFailed',
        message,
        details: [{ field: '$expand', message: `UnknownProperty: ${message}` }],
      },
    };
  }

  it('passes $expand of /Usage and /WebhookDeliveries (lists and single read) through: * expands nothing, a name is 400 UnknownProperty', async () => {
    const usage = {
      id: randomUUID(),
      applicationId,
      startTimestamp: '2030-01-01T00:00:00Z',
      endTimestamp: '2030-01-01T01:00:00Z',
      participantMessages: 1,
      participantMinutes: [],
    };
    const attempt = { id: randomUUID(), deliveryId: randomUUID(), attempt: 1, success: true, final: true };
    await fake(
      'usage-aggregator.v1.usage.list',
      (data) => expandRefusal(data.query, 'UsageRecord') ?? { value: [usage] },
    );
    await fake(
      'webhook-worker.v1.deliveries.list',
      (data) => expandRefusal(data.query, 'WebhookDelivery') ?? { value: [attempt] },
    );
    await fake('webhook-worker.v1.deliveries.get', (data) => expandRefusal(data.query, 'WebhookDelivery') ?? attempt);
    const reads: Array<{ path: string; base: Record<string, string>; answer: unknown }> = [
      { path: '/Usage', base: { applicationId }, answer: { value: [usage] } },
      { path: '/WebhookDeliveries', base: {}, answer: { value: [attempt] } },
      { path: `/WebhookDeliveries/${attempt.id}`, base: {}, answer: attempt },
    ];
    for (const { path, base, answer } of reads) {
      const plain = await h.api('GET', Object.keys(base).length ? `${path}${q(base)}` : path);
      expect(plain.body).toEqual(answer);
      const star = await h.api('GET', `${path}${q({ ...base, $expand: '*' })}`);
      expect(star.status).toBe(200);
      expect(star.body).toEqual(plain.body);
      expect(seen.at(-1)!.data.query).toEqual({ $expand: '*' });
      const nope = await h.api('GET', `${path}${q({ ...base, $expand: 'nope' })}`);
      expectODataError(nope, 400, 'UnknownProperty', '$expand');
      expect(nope.body.error.message).toContain("'nope'");
      expect(seen.at(-1)!.data.query).toEqual({ $expand: 'nope' });
    }
    // Grammar and limits are still checked here, before anything is asked.
    const before = seen.length;
    for (const { path, base } of reads) {
      expectODataError(
        await h.api('GET', `${path}${q({ ...base, $expand: 'a(' })}`),
        400,
        'QuerySyntaxError',
        '$expand',
      );
      expectODataError(
        await h.api('GET', `${path}${q({ ...base, $expand: 'a($expand=b($expand=c))' })}`),
        400,
        'QueryLimitExceeded',
        '$expand',
      );
    }
    expect(seen).toHaveLength(before);
  });

  it('serves the webhook delivery log from webhook-worker (list, one attempt, replay)', async () => {
    const attempt = { id: randomUUID(), deliveryId: randomUUID(), attempt: 1, success: false, final: true };
    await fake('webhook-worker.v1.deliveries.list', () => ({ value: [attempt], '@odata.count': 1 }));
    await fake('webhook-worker.v1.deliveries.get', (data) =>
      data.id === attempt.id ? { id: attempt.id } : { err: { code: 'NotFound', message: 'No such delivery' } },
    );
    await fake('webhook-worker.v1.deliveries.replay', (data) => ({ deliveryId: randomUUID(), replayOf: data.id }));
    const list = await h.api('GET', `/WebhookDeliveries${q({ $filter: 'success eq false', $count: true })}`);
    expect(list.body).toEqual({ '@odata.count': 1, value: [attempt] });
    expect(seen.at(-1)!.data).toEqual({
      scope: { organizationId: h.orgA, operator: false, principal: expect.any(String) },
      query: { $filter: 'success eq false', $count: 'true' },
    });
    const one = await h.api('GET', `/WebhookDeliveries/${attempt.id}${q({ $select: 'id' })}`);
    expect(one.body).toEqual({ id: attempt.id });
    expect(seen.at(-1)!.data.query).toEqual({ $select: 'id' });
    expectODataError(await h.api('GET', `/WebhookDeliveries/${randomUUID()}`), 404, 'NotFound');
    const replay = await h.api('POST', `/WebhookDeliveries/${attempt.id}/Replay`);
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual({ deliveryId: expect.any(String), replayOf: attempt.id });
    for (const s of subs.splice(0)) s.unsubscribe();
    await nc.flush();
    expectODataError(await h.api('GET', '/WebhookDeliveries'), 503, 'Unavailable');
  });
});
