/**
 * Interface B (management API) contracts, service-spec.md section 2.B and the action payloads of
 * 4.B; the export pattern is in the contracts README ("Interface B exports").
 */
import { ConnectionRecording } from '../interface-a/recordings.js';
import { SERVER_MANAGED_KEYWORD, validatorsFor } from '../interface-a/record-schema.js';
import * as actions from './actions.js';
import { ChannelClaim } from './channel-claim.js';
import * as channelConfig from './channel-config.js';
import * as levels from './level-configs.js';
import * as messaging from './management-messaging.js';
import * as records from './records.js';
import * as responses from './responses.js';

export * from './actions.js';
export * from './channel-claim.js';
export * from './channel-config.js';
export * from './level-configs.js';
export * from './records.js';
export * from './responses.js';
export * from './management-messaging.js';

export const InterfaceBSchemas = {
  // records
  ApiKey: records.ApiKey,
  ApplicationConfig: records.ApplicationConfig,
  ApplicationWebhook: records.ApplicationWebhook,
  ChannelWebhook: records.ChannelWebhook,
  ChangeRecord: records.ChangeRecord,
  UsageRecord: records.UsageRecord,
  UsageParticipantMinutesEntry: records.UsageParticipantMinutesEntry,
  UsageParticipantMinutes: records.UsageParticipantMinutes,
  Organization: records.Organization,
  Address: records.Address,
  Contact: records.Contact,
  PaymentMethod: records.PaymentMethod,
  PaymentCard: records.PaymentCard,
  Subscription: records.Subscription,
  Plan: records.Plan,
  UserAccount: records.UserAccount,
  Identity: records.Identity,
  ChannelClaim,
  ClaimsPayload: levels.ClaimsPayload,
  ServerMessage: levels.ServerMessage,
  ChannelConfigUpdate: levels.ChannelConfigUpdate,
  ChannelUserConfig: levels.ChannelUserConfig,
  ChannelDeviceConfig: levels.ChannelDeviceConfig,
  ChannelClientConfig: levels.ChannelClientConfig,
  ConnectionConfig: levels.ConnectionConfig,
  ChannelConfig: channelConfig.ChannelConfig,
  CodecConfig: channelConfig.CodecConfig,
  CodecBitrateConfig: channelConfig.CodecBitrateConfig,
  CodecToggleConfig: channelConfig.CodecToggleConfig,
  SfuConfig: channelConfig.SfuConfig,
  SfuVideoOutputConfig: channelConfig.SfuVideoOutputConfig,
  SimulcastConfig: channelConfig.SimulcastConfig,
  McuConfig: channelConfig.McuConfig,
  McuAudioOutputConfig: channelConfig.McuAudioOutputConfig,
  McuVideoOutputConfig: channelConfig.McuVideoOutputConfig,
  InputEncodingConfig: channelConfig.InputEncodingConfig,
  RtmpConfig: channelConfig.RtmpConfig,
  RecordingManagementOverride: channelConfig.RecordingManagementOverride,
  VideoEncoding: channelConfig.VideoEncoding,
  ManagementChannelRecording: responses.ManagementChannelRecording,
  ConnectionRecording,
  // request bodies
  ApiKeyCreateBody: records.ApiKeyCreateBody,
  ApiKeyUpdateBody: records.ApiKeyUpdateBody,
  ApplicationConfigCreateBody: records.ApplicationConfigCreateBody,
  ApplicationConfigUpdateBody: records.ApplicationConfigUpdateBody,
  ApplicationWebhookCreateBody: records.ApplicationWebhookCreateBody,
  ApplicationWebhookUpdateBody: records.ApplicationWebhookUpdateBody,
  ChannelConfigCreateBody: channelConfig.ChannelConfigCreateBody,
  ChannelConfigUpdateBody: channelConfig.ChannelConfigUpdateBody,
  ChannelWebhookCreateBody: records.ChannelWebhookCreateBody,
  ChannelWebhookUpdateBody: records.ChannelWebhookUpdateBody,
  OrganizationUpdateBody: records.OrganizationUpdateBody,
  OrganizationCreateBody: records.OrganizationCreateBody,
  OrganizationCreated: records.OrganizationCreated,
  PaymentMethodCreateBody: records.PaymentMethodCreateBody,
  PaymentMethodUpdateBody: records.PaymentMethodUpdateBody,
  SubscriptionUpdateBody: records.SubscriptionUpdateBody,
  UserAccountUpdateBody: records.UserAccountUpdateBody,
  // action payloads (Token takes ClaimsPayload, above)
  SendMessagePayload: actions.SendMessagePayload,
  SendUserMessagePayload: actions.SendUserMessagePayload,
  SendDeviceMessagePayload: actions.SendDeviceMessagePayload,
  SendClientMessagePayload: actions.SendClientMessagePayload,
  SendChannelMessagePayload: actions.SendChannelMessagePayload,
  SendChannelUserMessagePayload: actions.SendChannelUserMessagePayload,
  SendChannelDeviceMessagePayload: actions.SendChannelDeviceMessagePayload,
  SendChannelClientMessagePayload: actions.SendChannelClientMessagePayload,
  KickChannelPayload: actions.KickChannelPayload,
  KickUserPayload: actions.KickUserPayload,
  KickDevicePayload: actions.KickDevicePayload,
  KickClientPayload: actions.KickClientPayload,
  KickConnectionPayload: actions.KickConnectionPayload,
  UpdateChannelPayload: actions.UpdateChannelPayload,
  UpdateUserPayload: actions.UpdateUserPayload,
  UpdateDevicePayload: actions.UpdateDevicePayload,
  UpdateClientPayload: actions.UpdateClientPayload,
  UpdateConnectionPayload: actions.UpdateConnectionPayload,
  // response envelopes
  ApiKeyList: responses.ApiKeyList,
  ApplicationConfigList: responses.ApplicationConfigList,
  ApplicationWebhookList: responses.ApplicationWebhookList,
  ChangeRecordList: responses.ChangeRecordList,
  UsageRecordList: responses.UsageRecordList,
  ChannelConfigList: responses.ChannelConfigList,
  ChannelWebhookList: responses.ChannelWebhookList,
  ManagementChannelRecordingList: responses.ManagementChannelRecordingList,
  ConnectionRecordingList: responses.ConnectionRecordingList,
  OrganizationList: responses.OrganizationList,
  PaymentMethodList: responses.PaymentMethodList,
  SubscriptionList: responses.SubscriptionList,
  UserAccountList: responses.UserAccountList,
  StringValueResponse: responses.StringValueResponse,
  NumberValueResponse: responses.NumberValueResponse,
  // NATS requests of the reads management-api forwards (management-messaging.ts)
  ForwardedQueryOptions: messaging.ForwardedQueryOptions,
  UsageListRequest: messaging.UsageListRequest,
  ChannelRecordingsListRequest: messaging.ChannelRecordingsListRequest,
  ChannelRecordingRef: messaging.ChannelRecordingRef,
  ChannelRecordingGetRequest: messaging.ChannelRecordingGetRequest,
  ChannelRecordingReadRequest: messaging.ChannelRecordingReadRequest,
  ConnectionRecordingsListRequest: messaging.ConnectionRecordingsListRequest,
  ConnectionRecordingRef: messaging.ConnectionRecordingRef,
  ConnectionRecordingGetRequest: messaging.ConnectionRecordingGetRequest,
  ConnectionRecordingReadRequest: messaging.ConnectionRecordingReadRequest,
  StorageUsedSizeRequest: messaging.StorageUsedSizeRequest,
} as const;

export const InterfaceBValidators = validatorsFor(InterfaceBSchemas);

/** Validator of each action's payload, by action name. */
export const ActionValidators = validatorsFor(actions.ActionPayloads);

/** Server-managed fields of each request body (accepted, ignored): strip these before applying a body. */
export function serverManagedFields(schema: { [key: string]: unknown }): readonly string[] {
  const value = schema[SERVER_MANAGED_KEYWORD];
  return Array.isArray(value) ? (value as string[]) : [];
}
