import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Channel recordings, connection recordings and their mute timeline. Timestamps are Unix
 * milliseconds (bigint). `stage` is the pipeline position of a channel recording:
 * recording -> ingesting -> muxing -> moving -> ready | failed (deleted recordings keep their stage).
 */
export class Recordings1764100000000 implements MigrationInterface {
  name = 'Recordings1764100000000';

  async up(q: QueryRunner): Promise<void> {
    // Event ids are strings in the contract (EventInfo.id); do not require UUIDs.
    await q.query(`ALTER TABLE recording.processed_event ALTER COLUMN event_id TYPE text`);

    await q.query(`CREATE TABLE recording.channel_recording (
      id uuid PRIMARY KEY,
      organization_id text NOT NULL,
      application_id text NOT NULL,
      channel_id text NOT NULL,
      created_on bigint NOT NULL,
      modified_on bigint NOT NULL,
      deleted_on bigint,
      created_by uuid,
      modified_by uuid,
      deleted_by uuid,
      metadata text,
      external_id text,
      tag text,
      deleted boolean NOT NULL DEFAULT false,
      start_timestamp bigint NOT NULL,
      stop_timestamp bigint,
      expiry_timestamp bigint,
      has_audio boolean NOT NULL DEFAULT false,
      has_video boolean NOT NULL DEFAULT false,
      file_name text,
      audio_file_name text,
      video_file_name text,
      file_size bigint,
      audio_file_size bigint,
      video_file_size bigint,
      ready boolean NOT NULL DEFAULT false,
      audio_ready boolean NOT NULL DEFAULT false,
      video_ready boolean NOT NULL DEFAULT false,
      file_path text,
      audio_file_path text,
      video_file_path text,
      object_key text,
      audio_object_key text,
      video_object_key text,
      recording_path text,
      ingested boolean NOT NULL DEFAULT false,
      mux_pending boolean NOT NULL DEFAULT false,
      move_pending boolean NOT NULL DEFAULT false,
      audio_move_pending boolean NOT NULL DEFAULT false,
      video_move_pending boolean NOT NULL DEFAULT false,
      mux_enabled boolean NOT NULL DEFAULT true,
      move_enabled boolean NOT NULL DEFAULT true,
      delete_files boolean NOT NULL DEFAULT true,
      mux_args jsonb NOT NULL DEFAULT '[]'::jsonb,
      mux_seconds double precision,
      move_seconds double precision,
      audio_move_seconds double precision,
      video_move_seconds double precision,
      stage text NOT NULL DEFAULT 'recording' CHECK (stage IN ('recording', 'ingesting', 'muxing', 'moving', 'ready', 'failed')),
      stage_changed_on bigint NOT NULL,
      error text
    )`);
    await q.query(
      `CREATE UNIQUE INDEX channel_recording_open ON recording.channel_recording (application_id, channel_id) WHERE stop_timestamp IS NULL`,
    );
    await q.query(
      `CREATE INDEX channel_recording_app ON recording.channel_recording (application_id, start_timestamp DESC, id)`,
    );
    await q.query(
      `CREATE INDEX channel_recording_channel ON recording.channel_recording (application_id, channel_id, start_timestamp DESC, id)`,
    );
    await q.query(
      `CREATE INDEX channel_recording_org ON recording.channel_recording (organization_id, application_id)`,
    );
    await q.query(
      `CREATE INDEX channel_recording_expiry ON recording.channel_recording (expiry_timestamp) WHERE NOT deleted AND expiry_timestamp IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX channel_recording_stage ON recording.channel_recording (stage, stage_changed_on) WHERE stage IN ('ingesting', 'muxing', 'moving')`,
    );

    await q.query(`CREATE TABLE recording.connection_recording (
      id uuid PRIMARY KEY,
      channel_recording_id uuid NOT NULL REFERENCES recording.channel_recording (id) ON DELETE CASCADE,
      organization_id text NOT NULL,
      application_id text NOT NULL,
      channel_id text NOT NULL,
      user_id text NOT NULL,
      device_id text NOT NULL,
      client_id text NOT NULL,
      connection_id text NOT NULL,
      client_protocol text,
      connection_type text,
      connection_tag text,
      tag text,
      audio_id uuid,
      video_id uuid,
      created_on bigint NOT NULL,
      modified_on bigint NOT NULL,
      deleted_on bigint,
      created_by uuid,
      modified_by uuid,
      deleted_by uuid,
      metadata text,
      external_id text,
      deleted boolean NOT NULL DEFAULT false,
      start_timestamp bigint NOT NULL,
      stop_timestamp bigint,
      audio_first_frame_timestamp bigint,
      video_first_frame_timestamp bigint,
      audio_last_frame_timestamp bigint,
      video_last_frame_timestamp bigint,
      has_audio boolean NOT NULL DEFAULT false,
      has_video boolean NOT NULL DEFAULT false,
      audio_ready boolean NOT NULL DEFAULT false,
      video_ready boolean NOT NULL DEFAULT false,
      audio_muted boolean NOT NULL DEFAULT false,
      video_muted boolean NOT NULL DEFAULT false,
      audio_disabled boolean NOT NULL DEFAULT false,
      video_disabled boolean NOT NULL DEFAULT false,
      ingested boolean NOT NULL DEFAULT false,
      audio_move_pending boolean NOT NULL DEFAULT false,
      video_move_pending boolean NOT NULL DEFAULT false,
      audio_file_name text,
      video_file_name text,
      audio_file_path text,
      video_file_path text,
      audio_object_key text,
      video_object_key text,
      audio_content text,
      video_content text,
      audio_file_size bigint,
      video_file_size bigint,
      video_delay double precision,
      audio_move_seconds double precision,
      video_move_seconds double precision,
      last_event_on bigint NOT NULL,
      last_seen_on bigint NOT NULL,
      closed_reason text,
      orphaned boolean NOT NULL DEFAULT false,
      connection jsonb
    )`);
    await q.query(
      `CREATE UNIQUE INDEX connection_recording_open ON recording.connection_recording (application_id, channel_id, user_id, device_id, client_id, connection_id) WHERE stop_timestamp IS NULL`,
    );
    await q.query(`CREATE INDEX connection_recording_parent ON recording.connection_recording (channel_recording_id)`);
    await q.query(
      `CREATE INDEX connection_recording_app ON recording.connection_recording (application_id, start_timestamp DESC, id)`,
    );
    await q.query(
      `CREATE INDEX connection_recording_user ON recording.connection_recording (application_id, user_id, device_id, client_id)`,
    );
    await q.query(
      `CREATE INDEX connection_recording_channel ON recording.connection_recording (application_id, channel_id, user_id, device_id, client_id, connection_id)`,
    );
    await q.query(
      `CREATE INDEX connection_recording_idle ON recording.connection_recording (last_seen_on) WHERE stop_timestamp IS NULL`,
    );

    await q.query(`CREATE TABLE recording.recording_update (
      connection_recording_id uuid NOT NULL REFERENCES recording.connection_recording (id) ON DELETE CASCADE,
      index integer NOT NULL,
      timestamp bigint NOT NULL,
      connection_tag text,
      audio_muted boolean NOT NULL,
      video_muted boolean NOT NULL,
      audio_disabled boolean NOT NULL,
      video_disabled boolean NOT NULL,
      PRIMARY KEY (connection_recording_id, index)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE recording.recording_update`);
    await q.query(`DROP TABLE recording.connection_recording`);
    await q.query(`DROP TABLE recording.channel_recording`);
    await q.query(`ALTER TABLE recording.processed_event ALTER COLUMN event_id TYPE uuid USING event_id::uuid`);
  }
}
