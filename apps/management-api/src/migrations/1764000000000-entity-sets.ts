import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every interface B entity set (http-contract.md): application configs and their webhooks, channel
 * configs and their webhooks, the change log, payment methods, subscriptions, user accounts, and the
 * organization's own fields. Every row carries its organization; every list index starts with it.
 *
 * Secrets: `shared_secret` is kept in clear (it keys HMACs, so it must be recoverable); card numbers
 * and security codes are never stored, which the `payment_method_card_no_pan` check enforces.
 */
export class EntitySets1764000000000 implements MigrationInterface {
  name = 'EntitySets1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE management.payment_method (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES management.organization(id),
      type text,
      status text,
      card jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_on bigint NOT NULL,
      created_by text,
      modified_on bigint NOT NULL,
      modified_by text,
      CONSTRAINT payment_method_card_object CHECK (jsonb_typeof(card) = 'object'),
      CONSTRAINT payment_method_card_no_pan CHECK (NOT (card ? 'number') AND NOT (card ? 'securityCode'))
    )`);
    await q.query(
      `CREATE INDEX payment_method_organization_idx ON management.payment_method (organization_id, created_on, id)`,
    );

    await q.query(`ALTER TABLE management.organization
      ADD COLUMN payment_method_id uuid REFERENCES management.payment_method(id) ON DELETE SET NULL,
      ADD COLUMN vat_number text,
      ADD COLUMN industry text,
      ADD COLUMN address jsonb NOT NULL DEFAULT '{}'::jsonb,
      ADD COLUMN primary_contact jsonb NOT NULL DEFAULT '{}'::jsonb,
      ADD COLUMN additional_contacts jsonb`);

    await q.query(`CREATE TABLE management.application_config (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES management.organization(id),
      application_id text NOT NULL,
      disabled boolean,
      tag text,
      shared_secret text NOT NULL,
      created_on bigint NOT NULL,
      created_by text,
      modified_on bigint NOT NULL,
      modified_by text,
      CONSTRAINT application_config_application_id_key UNIQUE (application_id)
    )`);
    await q.query(
      `CREATE INDEX application_config_organization_idx ON management.application_config (organization_id, created_on, id)`,
    );

    await q.query(`CREATE TABLE management.application_webhook (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES management.organization(id),
      application_config_id uuid NOT NULL REFERENCES management.application_config(id) ON DELETE CASCADE,
      name text,
      url text,
      disabled boolean NOT NULL DEFAULT false,
      batch boolean NOT NULL DEFAULT false,
      reliable boolean NOT NULL DEFAULT false,
      events jsonb,
      created_on bigint NOT NULL,
      created_by text,
      modified_on bigint NOT NULL,
      modified_by text
    )`);
    await q.query(
      `CREATE INDEX application_webhook_organization_idx ON management.application_webhook (organization_id, created_on, id)`,
    );
    await q.query(
      `CREATE INDEX application_webhook_config_idx ON management.application_webhook (application_config_id, created_on, id)`,
    );

    await q.query(`CREATE TABLE management.channel_config (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES management.organization(id),
      application_config_id uuid NOT NULL REFERENCES management.application_config(id) ON DELETE CASCADE,
      channel_id_pattern text NOT NULL,
      recording_enabled boolean,
      is_default boolean NOT NULL DEFAULT false,
      priority integer NOT NULL DEFAULT 0,
      connection_stats_interval integer,
      bandwidth_adaptation_policy text NOT NULL DEFAULT 'Enabled',
      codec jsonb NOT NULL DEFAULT '{}'::jsonb,
      sfu jsonb NOT NULL DEFAULT '{}'::jsonb,
      mcu jsonb NOT NULL DEFAULT '{}'::jsonb,
      rtmp jsonb NOT NULL DEFAULT '{}'::jsonb,
      recording_management_override jsonb NOT NULL DEFAULT '{}'::jsonb,
      video_encodings jsonb NOT NULL DEFAULT '[]'::jsonb,
      created_on bigint NOT NULL,
      created_by text,
      modified_on bigint NOT NULL,
      modified_by text,
      CONSTRAINT channel_config_pattern CHECK (channel_id_pattern = '*' OR (length(channel_id_pattern) BETWEEN 1 AND 256 AND channel_id_pattern !~ '[[:space:]*]')),
      CONSTRAINT channel_config_policy CHECK (bandwidth_adaptation_policy IN ('Disabled', 'Enabled')),
      CONSTRAINT channel_config_video_encodings CHECK (jsonb_typeof(video_encodings) = 'array' AND jsonb_array_length(video_encodings) <= 3)
    )`);
    await q.query(
      `CREATE INDEX channel_config_organization_idx ON management.channel_config (organization_id, created_on, id)`,
    );
    await q.query(
      `CREATE INDEX channel_config_application_idx ON management.channel_config (application_config_id, created_on, id)`,
    );
    // One default channel config per application config.
    await q.query(
      `CREATE UNIQUE INDEX channel_config_one_default_idx ON management.channel_config (application_config_id) WHERE is_default`,
    );

    await q.query(`CREATE TABLE management.channel_webhook (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES management.organization(id),
      channel_config_id uuid NOT NULL REFERENCES management.channel_config(id) ON DELETE CASCADE,
      name text,
      url text,
      disabled boolean NOT NULL DEFAULT false,
      batch boolean NOT NULL DEFAULT false,
      reliable boolean NOT NULL DEFAULT false,
      events jsonb,
      created_on bigint NOT NULL,
      created_by text,
      modified_on bigint NOT NULL,
      modified_by text
    )`);
    await q.query(
      `CREATE INDEX channel_webhook_organization_idx ON management.channel_webhook (organization_id, created_on, id)`,
    );
    await q.query(
      `CREATE INDEX channel_webhook_config_idx ON management.channel_webhook (channel_config_id, created_on, id)`,
    );

    await q.query(`CREATE TABLE management.change_record (
      id uuid PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY,
      organization_id uuid NOT NULL REFERENCES management.organization(id),
      type text NOT NULL,
      entity_type text NOT NULL,
      entity_id text NOT NULL,
      property_name text NOT NULL,
      old_value text,
      new_value text,
      changed_on bigint NOT NULL,
      changed_by text NOT NULL
    )`);
    await q.query(`CREATE INDEX change_record_organization_idx ON management.change_record (organization_id, seq)`);
    await q.query(
      `CREATE INDEX change_record_changed_on_idx ON management.change_record (organization_id, changed_on, id)`,
    );
    await q.query(
      `CREATE INDEX change_record_entity_idx ON management.change_record (organization_id, entity_type, entity_id, seq)`,
    );

    await q.query(`CREATE TABLE management.subscription (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES management.organization(id),
      status text,
      trial_end_on bigint,
      trial_start_on bigint,
      activated_on bigint,
      next_billing_on bigint,
      cancelled_on bigint,
      billing_unit text,
      cancelled_reason text,
      platform_plan jsonb NOT NULL DEFAULT '{}'::jsonb,
      support_plan jsonb NOT NULL DEFAULT '{}'::jsonb,
      current_term_end bigint,
      enabled_features jsonb,
      created_on bigint NOT NULL,
      created_by text,
      modified_on bigint NOT NULL,
      modified_by text
    )`);
    await q.query(
      `CREATE INDEX subscription_organization_idx ON management.subscription (organization_id, created_on, id)`,
    );

    const downloadDates = [
      'android',
      'java',
      'net',
      'unity',
      'hololens',
      'web',
      'ios',
      'macos',
      'tvos',
      'uwp',
      'xamarin',
    ].map((p) => `last_svc_${p}_download_date bigint NOT NULL DEFAULT 0,`);
    await q.query(`CREATE TABLE management.user_account (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES management.organization(id),
      svc_app_created boolean NOT NULL DEFAULT false,
      svc_channel_created boolean NOT NULL DEFAULT false,
      svc_connection_created boolean NOT NULL DEFAULT false,
      ${downloadDates.join('\n      ')}
      first_name text,
      last_name text,
      username text,
      nickname text,
      email_address text,
      phone_number text,
      picture_url text,
      role text,
      identities jsonb,
      created_on bigint NOT NULL,
      created_by text,
      modified_on bigint NOT NULL,
      modified_by text
    )`);
    await q.query(
      `CREATE INDEX user_account_organization_idx ON management.user_account (organization_id, created_on, id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE management.user_account`);
    await q.query(`DROP TABLE management.subscription`);
    await q.query(`DROP TABLE management.change_record`);
    await q.query(`DROP TABLE management.channel_webhook`);
    await q.query(`DROP TABLE management.channel_config`);
    await q.query(`DROP TABLE management.application_webhook`);
    await q.query(`DROP TABLE management.application_config`);
    await q.query(`ALTER TABLE management.organization
      DROP COLUMN payment_method_id,
      DROP COLUMN vat_number,
      DROP COLUMN industry,
      DROP COLUMN address,
      DROP COLUMN primary_contact,
      DROP COLUMN additional_contacts`);
    await q.query(`DROP TABLE management.payment_method`);
  }
}
