import { defineEntityModel, type EntityModel, type PropertySpec } from '@switchboard/odata';
import { channelWebhookModel } from '../channel-webhooks/channel-webhook.model.js';
import type { EntitySetSpec } from '../common/record-reader.js';

const bitrateCodec = (name: string): PropertySpec => ({
  name,
  kind: 'complex',
  properties: [
    { name: 'disabled', kind: 'boolean' },
    { name: 'bitrate', kind: 'number' },
  ],
});
const toggleCodec = (name: string): PropertySpec => ({
  name,
  kind: 'complex',
  properties: [{ name: 'disabled', kind: 'boolean' }],
});
const input = (name: string): PropertySpec => ({
  name,
  kind: 'complex',
  properties: [
    { name: 'maxBitrate', kind: 'number' },
    { name: 'maxEncodings', kind: 'integer' },
  ],
});

export const videoEncodingModel: EntityModel = defineEntityModel({
  name: 'VideoEncoding',
  key: 'bitrate',
  properties: [
    { name: 'bitrate', kind: 'number' },
    { name: 'frameRate', kind: 'number' },
    { name: 'scale', kind: 'number' },
  ],
});

/**
 * The channel config. The nested settings are complex properties (`codec/vp8/bitrate gt 500`,
 * `rtmp/enabled eq true`; the RTMP `secretKey` is selectable, never filterable). `videoEncodings`
 * (inline) and `webhooks` (null unless expanded) are navigation properties.
 */
export const channelConfigModel = defineEntityModel({
  name: 'ChannelConfig',
  key: 'id',
  table: 'management.channel_config',
  properties: [
    { name: 'id', kind: 'guid' },
    { name: 'applicationConfigId', kind: 'guid', column: 'application_config_id' },
    { name: 'channelIdPattern', kind: 'string', column: 'channel_id_pattern' },
    { name: 'recordingEnabled', kind: 'boolean', column: 'recording_enabled' },
    { name: 'default', kind: 'boolean', column: 'is_default' },
    { name: 'priority', kind: 'integer' },
    { name: 'connectionStatsInterval', kind: 'integer', column: 'connection_stats_interval' },
    { name: 'bandwidthAdaptationPolicy', kind: 'string', column: 'bandwidth_adaptation_policy' },
    {
      name: 'codec',
      kind: 'complex',
      properties: [
        bitrateCodec('vp8'),
        bitrateCodec('vp9'),
        bitrateCodec('h264'),
        bitrateCodec('opus'),
        toggleCodec('g722'),
        toggleCodec('pcmu'),
        toggleCodec('pcma'),
      ],
    },
    {
      name: 'sfu',
      kind: 'complex',
      properties: [
        input('videoInput'),
        {
          name: 'videoOutput',
          kind: 'complex',
          properties: [{ name: 'simulcast', kind: 'complex', properties: [{ name: 'enabled', kind: 'boolean' }] }],
        },
        input('audioInput'),
      ],
    },
    {
      name: 'mcu',
      kind: 'complex',
      properties: [
        { name: 'audioOutput', kind: 'complex', properties: [{ name: 'quality', kind: 'string' }] },
        {
          name: 'videoOutput',
          kind: 'complex',
          properties: [
            { name: 'width', kind: 'number' },
            { name: 'height', kind: 'number' },
            { name: 'frameRate', kind: 'number' },
            { name: 'layoutMargin', kind: 'number' },
            { name: 'layoutCrop', kind: 'boolean' },
          ],
        },
        input('videoInput'),
        input('audioInput'),
      ],
    },
    {
      name: 'rtmp',
      kind: 'complex',
      properties: [
        { name: 'enabled', kind: 'boolean' },
        { name: 'url', kind: 'string' },
        { name: 'secretKey', kind: 'string', filterable: false, sortable: false },
      ],
    },
    {
      name: 'recordingManagementOverride',
      kind: 'complex',
      column: 'recording_management_override',
      properties: [{ name: 'muxDisabled', kind: 'boolean' }],
    },
  ],
  navigations: [
    { name: 'videoEncodings', many: true, target: videoEncodingModel, relation: { kind: 'jsonb' } },
    {
      name: 'webhooks',
      many: true,
      target: channelWebhookModel,
      relation: { kind: 'foreign-key', localKey: 'id', foreignKey: 'channelConfigId' },
    },
  ],
});

export const CHANNEL_CONFIGS: EntitySetSpec = {
  name: 'ChannelConfig',
  model: channelConfigModel,
  tenantColumn: 'organization_id',
  inline: { videoEncodings: 'video_encodings' },
  deferred: ['webhooks'],
  defaultOrder: ['"e"."created_on"'],
};
