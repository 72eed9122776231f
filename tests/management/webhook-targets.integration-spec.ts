/**
 * Webhook URLs that name a refused address without DNS (an IP literal, `localhost`) are refused
 * when written, with the setting webhook-worker applies at delivery (WEBHOOK_ALLOW_LOOPBACK,
 * WEBHOOK_ALLOW_PRIVATE_TARGETS). Real management-api on real PostgreSQL.
 */
import { expectODataError } from '../e2e/http.js';
import { startManagement, type Harness } from './support.js';

describe('webhook targets', () => {
  describe('with the default policy (public addresses only)', () => {
    let h: Harness;
    let configId: string;
    beforeAll(async () => {
      h = await startManagement('hooktargets');
      const config = await h.api('POST', '/ApplicationConfigs', {
        body: { applicationId: `${h.ns}-targets`.replace(/_/g, '-') },
      });
      configId = config.body.id as string;
    });
    afterAll(async () => {
      await h?.stop();
    });

    it.each([
      ['http://127.0.0.1:9000/hook', 'loopback'],
      ['http://2130706433/hook', 'loopback'],
      ['http://localhost:8080/hook', 'loopback'],
      ['https://[::1]/hook', 'loopback'],
      ['http://10.0.0.7/hook', 'private'],
      ['http://[::ffff:192.168.1.1]/hook', 'private'],
      ['http://169.254.169.254/latest/meta-data', 'metadata'],
      ['http://0.0.0.0/hook', 'unspecified'],
      // Other spellings of IPv4 addresses (decimal, hex, octal, short forms).
      ['http://0x7f.1/hook', 'loopback'],
      ['http://0177.0.0.1/hook', 'loopback'],
      ['http://017700000001/hook', 'loopback'],
      ['http://0xa9fea9fe/hook', 'metadata'],
      ['http://0/hook', 'unspecified'],
      // IPv6 forms that carry an IPv4 address.
      ['http://[::10.0.0.1]/hook', 'private'],
      ['http://[::ffff:0:10.0.0.1]/hook', 'private'],
      ['http://[64:ff9b:1::a00:1]/hook', 'private'],
      ['http://[64:ff9b::169.254.169.254]/hook', 'metadata'],
      ['http://[2002:7f00:1::1]/hook', 'loopback'],
      ['http://[2001:0:808:808::f5ff:fffe]/hook', 'private'],
      ['http://[::ffff:a9fe:a9fe]/hook', 'metadata'],
      ['http://[::]/hook', 'unspecified'],
      ['http://[fd00:ec2::254]/hook', 'metadata'],
      ['http://[fe80::1]/hook', 'link-local'],
    ])('refuses %s (%s) with a 400 naming the field', async (url, kind) => {
      const answer = await h.api('POST', '/ApplicationWebhooks', { body: { applicationConfigId: configId, url } });
      expectODataError(answer, 400, 'ValidationFailed', 'url');
      expect(answer.body.error.message).toBe(`url must not target a ${kind} address.`);
    });

    it('refuses IPv6 zone ids (not a URL host)', async () => {
      for (const url of ['http://[fe80::1%25eth0]/hook', 'http://[fe80::1%eth0]/hook']) {
        expectODataError(
          await h.api('POST', '/ApplicationWebhooks', { body: { applicationConfigId: configId, url } }),
          400,
          'ValidationFailed',
          'url',
        );
      }
    });

    it('accepts public addresses and names (a name is checked by webhook-worker against what it resolves to when it delivers)', async () => {
      for (const url of [
        'https://93.184.216.34/hook',
        'https://hooks.example.com/hook',
        'https://localhost.example.com/hook',
        'https://[64:ff9b::808:808]/hook',
        'https://[2606:4700::1111]/hook',
      ]) {
        const answer = await h.api('POST', '/ApplicationWebhooks', { body: { applicationConfigId: configId, url } });
        expect(answer.status).toBe(201);
      }
    });

    it('applies to inline webhooks of application and channel configs, and to channel webhooks, naming the item', async () => {
      const app = await h.api('POST', '/ApplicationConfigs', {
        body: {
          applicationId: `${h.ns}-inline`.replace(/_/g, '-'),
          webhooks: [{ url: 'https://hooks.example.com/a' }, { url: 'http://192.168.0.10/b' }],
        },
      });
      expectODataError(app, 400, 'ValidationFailed', 'webhooks[1].url');
      const channel = await h.api('POST', '/ChannelConfigs', {
        body: { applicationConfigId: configId, channelIdPattern: '*', webhooks: [{ url: 'http://[fe80::1]/c' }] },
      });
      expectODataError(channel, 400, 'ValidationFailed', 'webhooks[0].url');
      const cc = await h.api('POST', '/ChannelConfigs', {
        body: { applicationConfigId: configId, channelIdPattern: 'room-1' },
      });
      expect(cc.status).toBe(201);
      const hook = await h.api('POST', '/ChannelWebhooks', {
        body: { channelConfigId: cc.body.id, url: 'http://127.0.0.1/c' },
      });
      expectODataError(hook, 400, 'ValidationFailed', 'url');
    });

    it('judges a URL when it changes: a webhook written before keeps its URL through other updates', async () => {
      const created = await h.api('POST', '/ApplicationWebhooks', {
        body: { applicationConfigId: configId, url: 'https://hooks.example.com/kept' },
      });
      // Written when the policy allowed it (as if WEBHOOK_ALLOW_LOOPBACK was set then).
      await h.sql(`UPDATE management.application_webhook SET url = 'http://127.0.0.1:9000/kept' WHERE id = $1`, [
        created.body.id,
      ]);
      const patched = await h.api('PATCH', `/ApplicationWebhooks/${created.body.id}`, { body: { disabled: true } });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ url: 'http://127.0.0.1:9000/kept', disabled: true });
      const moved = await h.api('PATCH', `/ApplicationWebhooks/${created.body.id}`, {
        body: { url: 'http://127.0.0.2:9000/kept' },
      });
      expectODataError(moved, 400, 'ValidationFailed', 'url');
      expect((await h.api('GET', `/ApplicationWebhooks/${created.body.id}`)).body.url).toBe(
        'http://127.0.0.1:9000/kept',
      );
    });
  });

  describe('with WEBHOOK_ALLOW_LOOPBACK', () => {
    let h: Harness;
    let configId: string;
    beforeAll(async () => {
      h = await startManagement('hookloopback', { WEBHOOK_ALLOW_LOOPBACK: 'true' });
      configId = (
        await h.api('POST', '/ApplicationConfigs', { body: { applicationId: `${h.ns}-loop`.replace(/_/g, '-') } })
      ).body.id as string;
    });
    afterAll(async () => {
      await h?.stop();
    });

    it('accepts loopback targets and still refuses private and metadata ones', async () => {
      for (const url of [
        'http://127.0.0.1:9000/hook',
        'http://localhost:9000/hook',
        'http://0x7f.1:9000/hook',
        'http://[::ffff:127.0.0.1]:9000/hook',
        'http://[::127.0.0.1]:9000/hook',
      ]) {
        expect(
          (await h.api('POST', '/ApplicationWebhooks', { body: { applicationConfigId: configId, url } })).status,
        ).toBe(201);
      }
      for (const url of [
        'http://10.1.1.1/hook',
        'http://169.254.169.254/',
        'http://[::10.0.0.1]/hook',
        'http://[64:ff9b:1::a00:1]/hook',
        'http://[::ffff:0:a9fe:a9fe]/',
      ]) {
        expectODataError(
          await h.api('POST', '/ApplicationWebhooks', { body: { applicationConfigId: configId, url } }),
          400,
          'ValidationFailed',
          'url',
        );
      }
    });
  });
});
