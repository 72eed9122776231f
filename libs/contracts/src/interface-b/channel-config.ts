/**
 * The channel config of interface B (service-spec.md 2.B) with its nested settings.
 *
 * The record (response shape) carries every top-level field; the nested settings objects (codec,
 * SFU, MCU, RTMP, recording-management override, video encodings) have every field optional, so a
 * request can change one setting without restating the others. See records.ts for the rules.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Int32, Nullable, StringEnum, record, writeModels } from '../interface-a/record-schema.js';
import { ChannelWebhook, ChannelWebhookUpdateBody } from './records.js';

const opt = <T extends TSchema>(schema: T) => Type.Optional(schema);
const disabled = () => opt(Type.Boolean({ description: 'true disables the codec.' }));

/** `*` or a channel id: 1 to 256 characters, no whitespace, no `*`. */
export const CHANNEL_ID_PATTERN = '^(\\*|[^\\s*]{1,256})$';
export const WILDCARD_CHANNEL_ID_PATTERN = '*';

export const CodecBitrateConfig = record(
  'CodecBitrateConfig',
  { disabled: disabled(), bitrate: opt(Type.Number({ minimum: 0, description: 'Bitrate in kbps.' })) },
  'Settings of a codec with a bitrate (VP8, VP9, H.264, Opus).',
);
export type CodecBitrateConfig = Static<typeof CodecBitrateConfig>;

export const CodecToggleConfig = record(
  'CodecToggleConfig',
  { disabled: disabled() },
  'Settings of a codec without a bitrate (G.722, PCMU, PCMA).',
);
export type CodecToggleConfig = Static<typeof CodecToggleConfig>;

export const CodecConfig = record(
  'CodecConfig',
  {
    vp8: opt(CodecBitrateConfig),
    vp9: opt(CodecBitrateConfig),
    h264: opt(CodecBitrateConfig),
    opus: opt(CodecBitrateConfig),
    g722: opt(CodecToggleConfig),
    pcmu: opt(CodecToggleConfig),
    pcma: opt(CodecToggleConfig),
  },
  'Codec settings of a channel config.',
);
export type CodecConfig = Static<typeof CodecConfig>;

export const InputEncodingConfig = record(
  'InputEncodingConfig',
  {
    maxBitrate: opt(Type.Number({ minimum: 0, description: 'Maximum bitrate in kbps.' })),
    maxEncodings: opt(Int32({ minimum: 0, description: 'Maximum number of encodings (simulcast layers).' })),
  },
  'Limits on the media a client sends.',
);
export type InputEncodingConfig = Static<typeof InputEncodingConfig>;

export const SimulcastConfig = record('SimulcastConfig', { enabled: opt(Type.Boolean()) }, 'Simulcast settings.');
export type SimulcastConfig = Static<typeof SimulcastConfig>;

export const SfuVideoOutputConfig = record(
  'SfuVideoOutputConfig',
  { simulcast: opt(SimulcastConfig) },
  'Video the SFU forwards.',
);
export type SfuVideoOutputConfig = Static<typeof SfuVideoOutputConfig>;

export const SfuConfig = record(
  'SfuConfig',
  {
    videoInput: opt(InputEncodingConfig),
    videoOutput: opt(SfuVideoOutputConfig),
    audioInput: opt(InputEncodingConfig),
  },
  'SFU settings of a channel config.',
);
export type SfuConfig = Static<typeof SfuConfig>;

export const McuAudioOutputConfig = record(
  'McuAudioOutputConfig',
  { quality: opt(Type.String()) },
  'Audio the MCU mixes.',
);
export type McuAudioOutputConfig = Static<typeof McuAudioOutputConfig>;

export const McuVideoOutputConfig = record(
  'McuVideoOutputConfig',
  {
    width: opt(Type.Number({ minimum: 0 })),
    height: opt(Type.Number({ minimum: 0 })),
    frameRate: opt(Type.Number({ minimum: 0 })),
    layoutMargin: opt(Type.Number({ minimum: 0 })),
    layoutCrop: opt(Type.Boolean()),
  },
  'Video the MCU mixes.',
);
export type McuVideoOutputConfig = Static<typeof McuVideoOutputConfig>;

export const McuConfig = record(
  'McuConfig',
  {
    audioOutput: opt(McuAudioOutputConfig),
    videoOutput: opt(McuVideoOutputConfig),
    videoInput: opt(InputEncodingConfig),
    audioInput: opt(InputEncodingConfig),
  },
  'MCU settings of a channel config.',
);
export type McuConfig = Static<typeof McuConfig>;

export const RtmpConfig = record(
  'RtmpConfig',
  {
    enabled: opt(Type.Boolean()),
    url: opt(Type.String()),
    secretKey: opt(Type.String({ description: 'Stream key (a secret: redacted in the change log).' })),
  },
  'RTMP output of a channel config.',
);
export type RtmpConfig = Static<typeof RtmpConfig>;

export const RecordingManagementOverride = record(
  'RecordingManagementOverride',
  { muxDisabled: opt(Type.Boolean({ description: 'true: recordings of matching channels are not muxed.' })) },
  'Overrides of recording management for matching channels.',
);
export type RecordingManagementOverride = Static<typeof RecordingManagementOverride>;

export const VideoEncoding = record(
  'VideoEncoding',
  {
    bitrate: opt(Type.Number({ minimum: 0, description: 'Bitrate in kbps.' })),
    frameRate: opt(Type.Number({ minimum: 0 })),
    scale: opt(Type.Number({ minimum: 0, description: 'Scale relative to the input resolution.' })),
  },
  'One video encoding (simulcast layer).',
);
export type VideoEncoding = Static<typeof VideoEncoding>;

export const BANDWIDTH_ADAPTATION_POLICIES = ['Disabled', 'Enabled'] as const;
export const BandwidthAdaptationPolicy = StringEnum(BANDWIDTH_ADAPTATION_POLICIES);
export type BandwidthAdaptationPolicy = Static<typeof BandwidthAdaptationPolicy>;

export const ChannelConfig = record(
  'ChannelConfig',
  {
    id: Nullable(Type.String(), { description: 'Unique id of the config.' }),
    applicationConfigId: Type.String({ description: 'The application config this channel config belongs to.' }),
    channelIdPattern: Type.String({
      pattern: CHANNEL_ID_PATTERN,
      description: 'The channel id the config applies to, or `*` for every channel.',
      errorMessage: 'must be `*` or a channel id (1 to 256 characters, no whitespace, no `*`)',
    }),
    recordingEnabled: Nullable(Type.Boolean()),
    default: Type.Boolean({ description: 'Marks the default channel config.' }),
    priority: Int32({
      description: 'When several configs match a channel, the highest priority wins, then a specific pattern over `*`.',
    }),
    connectionStatsInterval: Nullable(Int32({ minimum: 0 }), { description: 'Interval of connection stats reports.' }),
    bandwidthAdaptationPolicy: BandwidthAdaptationPolicy,
    codec: CodecConfig,
    sfu: SfuConfig,
    mcu: McuConfig,
    rtmp: RtmpConfig,
    recordingManagementOverride: RecordingManagementOverride,
    videoEncodings: Type.Array(VideoEncoding, { maxItems: 3, description: 'At most 3 encodings.' }),
    webhooks: Nullable(Type.Array(ChannelWebhook)),
  },
  'Settings for the channels whose id matches `channelIdPattern`.',
);
export type ChannelConfig = Static<typeof ChannelConfig>;
/** Inline webhooks of a request body take the webhook update form (their `channelConfigId` is the parent's). */
export const { Create: ChannelConfigCreateBody, Update: ChannelConfigUpdateBody } = writeModels(ChannelConfig, {
  serverManaged: ['id'],
  required: ['applicationConfigId', 'channelIdPattern'],
  overrides: { webhooks: Nullable(Type.Array(ChannelWebhookUpdateBody)) },
});
export type ChannelConfigCreateBody = Static<typeof ChannelConfigCreateBody>;
export type ChannelConfigUpdateBody = Static<typeof ChannelConfigUpdateBody>;
