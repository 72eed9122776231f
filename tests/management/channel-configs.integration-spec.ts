/** Channel configs and channel webhooks on real PostgreSQL: nested settings, rules, OData, change log. */
import { expectODataError } from '../e2e/http.js';
import { changeMap, changesOf, expectedWebhook, q, startManagement, type Harness } from './support.js';

describe('channel configs and channel webhooks', () => {
  let h: Harness;
  let appConfigId: string;
  let otherAppConfigId: string;

  beforeAll(async () => {
    h = await startManagement('chconfigs');
    appConfigId = (
      await h.api('POST', '/ApplicationConfigs', { body: { applicationId: `${h.ns}-chapp`.replace(/_/g, '-') } })
    ).body.id;
    otherAppConfigId = (
      await h.api('POST', '/ApplicationConfigs', { body: { applicationId: `${h.ns}-chapp2`.replace(/_/g, '-') } })
    ).body.id;
  });
  afterAll(async () => {
    await h?.stop();
  });

  const full = () => ({
    applicationConfigId: appConfigId,
    channelIdPattern: 'lobby',
    recordingEnabled: true,
    priority: 5,
    connectionStatsInterval: 10,
    bandwidthAdaptationPolicy: 'Disabled',
    codec: { vp8: { disabled: false, bitrate: 800 }, h264: { disabled: true }, pcmu: { disabled: true } },
    sfu: { videoInput: { maxBitrate: 2000, maxEncodings: 3 }, videoOutput: { simulcast: { enabled: true } } },
    mcu: {
      audioOutput: { quality: 'high' },
      videoOutput: { width: 1280, height: 720, frameRate: 30, layoutMargin: 2, layoutCrop: true },
    },
    rtmp: { enabled: true, url: 'rtmp://live.example.com/app', secretKey: 'stream-key-123' },
    recordingManagementOverride: { muxDisabled: true },
    videoEncodings: [
      { bitrate: 1000, frameRate: 30, scale: 1 },
      { bitrate: 500, frameRate: 15, scale: 0.5 },
      { bitrate: 150, frameRate: 15, scale: 0.25 },
    ],
  });

  it('creates a channel config with every nested setting, reads it back, and logs it (RTMP key redacted)', async () => {
    const created = await h.api('POST', '/ChannelConfigs', { body: { ...full(), id: 'ignored' } });
    expect(created.status).toBe(201);
    const { applicationConfigId, ...rest } = full();
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      applicationConfigId,
      default: false,
      ...rest,
      webhooks: null,
    });
    expect((await h.api('GET', `/ChannelConfigs/${created.body.id}`)).body).toEqual(created.body);

    const log = changeMap(await changesOf(h, created.body.id), 'Create');
    expect(log.channelIdPattern).toEqual([null, 'lobby']);
    expect(log.priority).toEqual([null, '5']);
    expect(JSON.parse(log.codec![1]!)).toEqual(full().codec);
    expect(JSON.parse(log.rtmp![1]!)).toEqual({
      enabled: true,
      url: 'rtmp://live.example.com/app',
      secretKey: '<redacted>',
    });
    expect(JSON.stringify(log)).not.toContain('stream-key-123');
  });

  it('enforces the rules: a channel id or *, at most 3 video encodings, one default per application config', async () => {
    expectODataError(
      await h.api('POST', '/ChannelConfigs', { body: { applicationConfigId: appConfigId, channelIdPattern: 'a b' } }),
      400,
      'ValidationFailed',
      'channelIdPattern',
    );
    expectODataError(
      await h.api('POST', '/ChannelConfigs', { body: { applicationConfigId: appConfigId, channelIdPattern: 'lob*' } }),
      400,
      'ValidationFailed',
      'channelIdPattern',
    );
    const four = [1, 2, 3, 4].map((n) => ({ bitrate: n * 100 }));
    expectODataError(
      await h.api('POST', '/ChannelConfigs', {
        body: { applicationConfigId: appConfigId, channelIdPattern: '*', videoEncodings: four },
      }),
      400,
      'ValidationFailed',
      'videoEncodings',
    );
    expectODataError(
      await h.api('POST', '/ChannelConfigs', { body: { applicationConfigId: 'nope', channelIdPattern: '*' } }),
      400,
      'ValidationFailed',
      'applicationConfigId',
    );
    expectODataError(
      await h.api('POST', '/ChannelConfigs', { body: { channelIdPattern: '*' } }),
      400,
      'ValidationFailed',
      'applicationConfigId',
    );

    const first = await h.api('POST', '/ChannelConfigs', {
      body: { applicationConfigId: appConfigId, channelIdPattern: '*', default: true },
    });
    expect(first.status).toBe(201);
    expectODataError(
      await h.api('POST', '/ChannelConfigs', {
        body: { applicationConfigId: appConfigId, channelIdPattern: 'other', default: true },
      }),
      409,
      'Conflict',
      'default',
    );
    const second = await h.api('POST', '/ChannelConfigs', {
      body: { applicationConfigId: appConfigId, channelIdPattern: 'other' },
    });
    expectODataError(
      await h.api('PATCH', `/ChannelConfigs/${second.body.id}`, { body: { default: true } }),
      409,
      'Conflict',
      'default',
    );
    // Another application config has its own default.
    expect(
      (
        await h.api('POST', '/ChannelConfigs', {
          body: { applicationConfigId: otherAppConfigId, channelIdPattern: '*', default: true },
        })
      ).status,
    ).toBe(201);
    // Re-saving the default itself is fine.
    expect(
      (await h.api('PUT', `/ChannelConfigs/${first.body.id}`, { body: { default: true, priority: 1 } })).status,
    ).toBe(200);
  });

  it('PUT replaces (defaults for absent fields, pattern and parent kept), PATCH merges, both logged', async () => {
    const created = await h.api('POST', '/ChannelConfigs', { body: { ...full(), channelIdPattern: 'replace-me' } });
    const put = await h.api('PUT', `/ChannelConfigs/${created.body.id}`, {
      body: { priority: 9, codec: { opus: { bitrate: 64 } } },
    });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({
      id: created.body.id,
      applicationConfigId: appConfigId,
      channelIdPattern: 'replace-me',
      recordingEnabled: null,
      default: false,
      priority: 9,
      connectionStatsInterval: null,
      bandwidthAdaptationPolicy: 'Enabled',
      codec: { opus: { bitrate: 64 } },
      sfu: {},
      mcu: {},
      rtmp: {},
      recordingManagementOverride: {},
      videoEncodings: [],
      webhooks: null,
    });
    const patched = await h.api('PATCH', `/ChannelConfigs/${created.body.id}`, {
      body: { recordingEnabled: false, applicationConfigId: otherAppConfigId },
    });
    expect(patched.body).toEqual({ ...put.body, recordingEnabled: false, applicationConfigId: otherAppConfigId });
    const updates = changeMap(await changesOf(h, created.body.id), 'Update');
    expect(updates.priority).toEqual(['5', '9']);
    expect(updates.applicationConfigId).toEqual([appConfigId, otherAppConfigId]);
    expect(updates.rtmp).toEqual([
      JSON.stringify({ enabled: true, secretKey: '<redacted>', url: 'rtmp://live.example.com/app' }),
      '{}',
    ]);
  });

  it('lists with filters on nested settings, $orderby, $top, $skip, $count, $select and $expand', async () => {
    const parent = (
      await h.api('POST', '/ApplicationConfigs', { body: { applicationId: `${h.ns}-listapp`.replace(/_/g, '-') } })
    ).body.id;
    for (const [pattern, bitrate, priority] of [
      ['room-a', 300, 1],
      ['room-b', 900, 3],
      ['room-c', 1200, 2],
      ['room-d', 1500, 4],
    ] as const) {
      const body = {
        applicationConfigId: parent,
        channelIdPattern: pattern,
        priority,
        codec: { vp8: { bitrate } },
        videoEncodings: [{ bitrate: 100 }, { bitrate: 700 }],
        webhooks: [{ name: `${pattern}-hook` }],
      };
      expect((await h.api('POST', '/ChannelConfigs', { body })).status).toBe(201);
    }
    const page = await h.api(
      'GET',
      `/ChannelConfigs${q({
        applicationConfigId: parent,
        $filter: 'codec/vp8/bitrate gt 500',
        $orderby: 'priority desc',
        $top: 2,
        $skip: 1,
        $count: true,
        $select: 'channelIdPattern,codec/vp8',
        $expand: 'webhooks($select=name),videoEncodings($filter=bitrate gt 500)',
      })}`,
    );
    expect(page.status).toBe(200);
    expect(page.body).toEqual({
      '@odata.count': 3,
      value: [
        {
          channelIdPattern: 'room-b',
          codec: { vp8: { bitrate: 900 } },
          webhooks: [{ name: 'room-b-hook' }],
          videoEncodings: [{ bitrate: 700 }],
        },
        {
          channelIdPattern: 'room-c',
          codec: { vp8: { bitrate: 1200 } },
          webhooks: [{ name: 'room-c-hook' }],
          videoEncodings: [{ bitrate: 700 }],
        },
      ],
    });
    expectODataError(
      await h.api('GET', `/ChannelConfigs${q({ $filter: "rtmp/secretKey eq 'x'" })}`),
      400,
      'ValidationFailed',
      '$filter',
    );
    expectODataError(
      await h.api('GET', `/ChannelConfigs${q({ applicationConfigId: '00000000-0000-4000-8000-000000000000' })}`),
      404,
      'NotFound',
    );
  });

  it('channel webhooks: create, get, list by channel config, PUT, PATCH, with change records', async () => {
    const config = (
      await h.api('POST', '/ChannelConfigs', { body: { applicationConfigId: appConfigId, channelIdPattern: 'hooked' } })
    ).body;
    const created = await h.api('POST', '/ChannelWebhooks', {
      body: {
        channelConfigId: config.id,
        name: 'joined',
        url: 'https://hooks.example.com/joined',
        batch: true,
        events: ['channel.client.joined', 'channel.client.left'],
        createdOn: 1,
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      channelConfigId: config.id,
      name: 'joined',
      url: 'https://hooks.example.com/joined',
      disabled: false,
      batch: true,
      reliable: false,
      events: ['channel.client.joined', 'channel.client.left'],
      id: expect.any(String),
      createdOn: expect.any(Number),
      createdBy: expect.any(String),
      modifiedOn: expect.any(Number),
      modifiedBy: expect.any(String),
    });
    expect(created.body.createdOn).toBeGreaterThan(1);
    expect((await h.api('GET', `/ChannelWebhooks/${created.body.id}`)).body).toEqual(created.body);
    await h.api('POST', '/ChannelWebhooks', { body: { channelConfigId: config.id, name: 'left', reliable: true } });

    const list = await h.api(
      'GET',
      `/ChannelWebhooks${q({ channelConfigId: config.id, $filter: 'reliable eq false', $select: 'name,events', $count: true })}`,
    );
    expect(list.body).toEqual({
      '@odata.count': 1,
      value: [{ name: 'joined', events: ['channel.client.joined', 'channel.client.left'] }],
    });
    const sorted = await h.api(
      'GET',
      `/ChannelWebhooks${q({ channelConfigId: config.id, $orderby: 'name desc', $top: 1, $skip: 0 })}`,
    );
    expect(sorted.body.value.map((w: any) => w.name)).toEqual(['left']);
    const viaParent = await h.api(
      'GET',
      `/ChannelConfigs/${config.id}${q({ $expand: 'webhooks($orderby=name)', $select: 'id' })}`,
    );
    expect(viaParent.body.webhooks.map((w: any) => w.name)).toEqual(['joined', 'left']);

    const put = await h.api('PUT', `/ChannelWebhooks/${created.body.id}`, {
      body: { name: 'renamed', url: 'https://hooks.example.com/r' },
    });
    expect(put.status).toBe(200);
    expect(put.body).toEqual(
      expect.objectContaining({ name: 'renamed', batch: false, events: null, channelConfigId: config.id }),
    );
    const patch = await h.api('PATCH', `/ChannelWebhooks/${created.body.id}`, { body: { disabled: true } });
    expect(patch.body).toEqual({ ...put.body, disabled: true, modifiedOn: expect.any(Number) });

    const log = await changesOf(h, created.body.id);
    expect(changeMap(log, 'Create')).toEqual(
      expect.objectContaining({
        channelConfigId: [null, config.id],
        name: [null, 'joined'],
        batch: [null, 'true'],
        events: [null, '["channel.client.joined","channel.client.left"]'],
      }),
    );
    expect(log.filter((c) => c.type === 'Update').map((c) => c.propertyName)).toEqual([
      'name',
      'url',
      'batch',
      'events',
      'disabled',
    ]);

    // Inline webhooks of a channel config: create and update answer them as written (body order).
    const inline = await h.api('POST', '/ChannelConfigs', {
      body: {
        applicationConfigId: appConfigId,
        channelIdPattern: 'inline',
        webhooks: [
          { name: 'one', url: 'https://hooks.example.com/1', events: ['channel.activated'] },
          { name: 'two', reliable: true },
        ],
      },
    });
    expect(inline.status).toBe(201);
    const hook = (fields: Record<string, unknown>) => expectedWebhook({ channelConfigId: inline.body.id }, fields);
    expect(inline.body.webhooks).toEqual([
      hook({ name: 'one', url: 'https://hooks.example.com/1', events: ['channel.activated'] }),
      hook({ name: 'two', reliable: true }),
    ]);
    expect(
      (await h.api('GET', `/ChannelConfigs/${inline.body.id}${q({ $expand: 'webhooks($orderby=name)' })}`)).body,
    ).toEqual(inline.body);
    expect((await h.api('GET', `/ChannelConfigs/${inline.body.id}`)).body).toEqual({ ...inline.body, webhooks: null });
    const [one] = inline.body.webhooks;
    const replaced = await h.api('PUT', `/ChannelConfigs/${inline.body.id}`, {
      body: { priority: 3, webhooks: [{ name: 'three' }, { id: one.id, name: 'one-renamed' }] },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual(
      expect.objectContaining({
        id: inline.body.id,
        priority: 3,
        webhooks: [hook({ name: 'three' }), hook({ id: one.id, name: 'one-renamed', createdOn: one.createdOn })],
      }),
    );
    const merged = await h.api('PATCH', `/ChannelConfigs/${inline.body.id}`, { body: { priority: 4 } });
    expect(merged.body).toEqual({ ...replaced.body, priority: 4, webhooks: null });
    const listed = await h.api(
      'GET',
      `/ChannelWebhooks${q({ channelConfigId: inline.body.id, $orderby: 'name desc' })}`,
    );
    expect(listed.body.value).toEqual(replaced.body.webhooks);
    expectODataError(
      await h.api('POST', '/ChannelWebhooks', { body: { name: 'orphan' } }),
      400,
      'ValidationFailed',
      'channelConfigId',
    );
    expectODataError(
      await h.api('POST', '/ChannelWebhooks', { body: { channelConfigId: config.id, events: ['no.such.event'] } }),
      400,
      'ValidationFailed',
      'events[0]',
    );
  });
});
