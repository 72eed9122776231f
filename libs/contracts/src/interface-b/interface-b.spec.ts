import {
  channelClaimSample,
  channelRecordingSample,
  connectionRecordingSample,
  UUID_A,
  T0,
  T1,
} from '../interface-a/samples.testing.js';
import { describeContracts, type ContractCase, type ContractTable } from '../interface-a/contract-table.testing.js';
import * as interfaceB from './index.js';
import {
  ACTION_NAMES,
  ActionPayloads,
  ActionValidators,
  CHANGE_TYPES,
  InterfaceBSchemas,
  InterfaceBValidators,
  SDK_DOWNLOAD_DATE_FIELDS,
  isActionName,
  serverManagedFields,
  type ApiKey,
  type ApplicationConfig,
  type ApplicationWebhook,
  type ChangeRecord,
  type ChannelConfig,
  type ChannelWebhook,
  type Identity,
  type ManagementChannelRecording,
  type Organization,
  type PaymentMethod,
  type Subscription,
  type UsageRecord,
  type UserAccount,
} from './index.js';

const NOW = 1740823200000;
const audit = { id: 'rec-1', createdOn: NOW, createdBy: 'user-1', modifiedOn: NOW + 1000, modifiedBy: null };

const apiKey: ApiKey = { key: null, tag: 'ci', disabled: false, ...audit };
const applicationWebhook: ApplicationWebhook = {
  applicationConfigId: 'appcfg-1',
  name: 'all events',
  url: 'https://hooks.example.test/sb',
  disabled: false,
  batch: true,
  reliable: true,
  events: ['channel.activated', 'client.registered'],
  ...audit,
};
const channelWebhook: ChannelWebhook = {
  channelConfigId: 'chcfg-1',
  name: null,
  url: 'https://hooks.example.test/room',
  disabled: false,
  batch: false,
  reliable: false,
  events: ['*'],
  ...audit,
};
const applicationConfig: ApplicationConfig = {
  id: 'appcfg-1',
  organizationId: 'org-1',
  disabled: false,
  tag: 'prod',
  applicationId: 'app-1',
  sharedSecret: '<SHARED_SECRET>',
  webhooks: [applicationWebhook],
};
const changeRecord: ChangeRecord = {
  type: 'Update',
  entityType: 'ApplicationConfig',
  entityId: 'appcfg-1',
  propertyName: 'sharedSecret',
  oldValue: '<redacted>',
  newValue: '<redacted>',
  changedOn: NOW,
  changedBy: 'user-1',
  ...audit,
};
const usageRecord: UsageRecord = {
  id: UUID_A,
  applicationId: 'app-1',
  startTimestamp: T0,
  endTimestamp: T1,
  participantMessages: 12,
  participantMinutes: [{ key: 921600, value: { maxPixelCount: 921600, usageParticipantMinutes: 42.5 } }],
};
const address = {
  line1: '1 Main St',
  line2: '',
  city: 'Springfield',
  state: 'IL',
  postalCode: '62701',
  country: 'US',
  countryFullName: 'United States',
};
const contact = {
  firstName: 'Ada',
  lastName: 'Lovelace',
  emailAddress: 'ada@example.test',
  phoneNumber: '+1 555 0100',
};
const organization: Organization = {
  id: 'org-1',
  name: 'Example Inc.',
  paymentMethodId: 'pm-1',
  vatNumber: null,
  industry: 'Education',
  userIds: ['user-1'],
  address,
  primaryContact: contact,
  additionalContacts: [],
  disabled: false,
  createdOn: NOW,
  modifiedOn: NOW,
};
const card = {
  firstName: 'Ada',
  lastName: 'Lovelace',
  brand: 'visa',
  expiryMonth: 12,
  expiryYear: 2030,
  maskedNumber: '**** 4242',
  address,
};
const paymentMethod: PaymentMethod = {
  id: 'pm-1',
  organizationId: 'org-1',
  type: 'card',
  status: 'valid',
  card,
  createdOn: NOW,
  modifiedOn: NOW,
};
const plan = {
  name: 'Pro',
  description: 'Pro plan',
  status: 'active',
  externalId: 'plan-pro',
  planType: 'platform',
  archivedOn: 0,
  price: 99,
};
const subscription: Subscription = {
  id: 'sub-1',
  organizationId: 'org-1',
  status: 'active',
  trialEndOn: null,
  trialStartOn: null,
  activatedOn: NOW,
  nextBillingOn: NOW + 86400000,
  cancelledOn: null,
  billingUnit: 'month',
  cancelledReason: null,
  platformPlan: plan,
  supportPlan: { name: 'Basic' },
  createdOn: NOW,
  modifiedOn: NOW,
  currentTermEnd: NOW + 86400000,
  EnabledFeatures: ['recording'],
};
const person = {
  id: 'user-1',
  firstName: 'Ada',
  lastName: 'Lovelace',
  username: 'ada',
  nickname: null,
  emailAddress: 'ada@example.test',
  phoneNumber: null,
  pictureUrl: null,
  role: 'owner',
};
const identity: Identity = { ...person, id: 'idp|123', createdOn: NOW, modifiedOn: NOW };
const userAccount: UserAccount = {
  svcAppCreated: true,
  svcChannelCreated: true,
  svcConnectionCreated: false,
  ...(Object.fromEntries(SDK_DOWNLOAD_DATE_FIELDS.map((f) => [f, 0])) as Record<
    (typeof SDK_DOWNLOAD_DATE_FIELDS)[number],
    number
  >),
  lastSvcWebDownloadDate: NOW,
  ...person,
  createdOn: NOW,
  modifiedOn: NOW,
  identities: [identity],
};
const codec = {
  vp8: { disabled: false, bitrate: 1000 },
  vp9: { disabled: true, bitrate: 800 },
  h264: { disabled: false, bitrate: 1200 },
  opus: { disabled: false, bitrate: 64 },
  g722: { disabled: true },
  pcmu: { disabled: false },
  pcma: { disabled: false },
};
const channelConfig: ChannelConfig = {
  id: 'chcfg-1',
  applicationConfigId: 'appcfg-1',
  channelIdPattern: '*',
  recordingEnabled: null,
  default: true,
  priority: 0,
  connectionStatsInterval: 5000,
  bandwidthAdaptationPolicy: 'Enabled',
  codec,
  sfu: {
    videoInput: { maxBitrate: 2500, maxEncodings: 3 },
    videoOutput: { simulcast: { enabled: true } },
    audioInput: { maxBitrate: 64, maxEncodings: 1 },
  },
  mcu: {
    audioOutput: { quality: 'high' },
    videoOutput: { width: 1280, height: 720, frameRate: 30, layoutMargin: 4, layoutCrop: true },
    videoInput: { maxBitrate: 1000, maxEncodings: 1 },
    audioInput: { maxBitrate: 64, maxEncodings: 1 },
  },
  rtmp: { enabled: false, url: 'rtmp://live.example.test/app', secretKey: '<SECRET>' },
  recordingManagementOverride: { muxDisabled: false },
  videoEncodings: [
    { bitrate: 1000, frameRate: 30, scale: 1 },
    { bitrate: 500, frameRate: 15, scale: 0.5 },
  ],
  webhooks: [channelWebhook],
};
const managementChannelRecording: ManagementChannelRecording = (() => {
  const { connectionRecordings: _dropped, ...rest } = channelRecordingSample;
  return rest;
})();
const level = { recording: true, recordingMode: 'AudioVideo', recordingTag: null, audioMuted: false, videoMuted: null };
const channelClientConfig = {
  ...level,
  audioUmuteDisabled: true,
  videoUnmuteDisabled: false,
  excludedConnectionIds: ['conn-1'],
};
const serverMessage = {
  message: 'hello',
  clientTag: null,
  clientRoles: null,
  deviceId: null,
  deviceAlias: null,
  userId: 'admin',
  userAlias: 'Admin',
};
const claims = {
  userId: 'user-1',
  deviceId: 'device-1',
  clientId: 'client-1',
  clientRoles: ['speaker'],
  channelClaims: [channelClaimSample],
};

const records = {
  ApiKey: { valid: apiKey, wrong: { field: 'createdOn', value: '2025-01-01' } },
  ApplicationConfig: { valid: applicationConfig, wrong: { field: 'disabled', value: 'no' } },
  ApplicationWebhook: { valid: applicationWebhook, wrong: { field: 'reliable', value: 1 } },
  ChannelWebhook: { valid: channelWebhook, wrong: { field: 'channelConfigId', value: 5 } },
  ChangeRecord: { valid: changeRecord, wrong: { field: 'changedOn', value: 1.5 } },
  UsageRecord: {
    valid: usageRecord,
    wrong: { field: 'participantMinutes[0].value.usageParticipantMinutes', value: 'many' },
  },
  Organization: { valid: organization, wrong: { field: 'address.city', value: 42 } },
  PaymentMethod: { valid: paymentMethod, wrong: { field: 'card.expiryMonth', value: 13 } },
  Subscription: { valid: subscription, wrong: { field: 'platformPlan.price', value: 'free' } },
  UserAccount: { valid: userAccount, wrong: { field: 'lastSvcTVosDownloadDate', value: '2025-01-01' } },
  ChannelConfig: { valid: channelConfig, wrong: { field: 'codec.vp8.bitrate', value: 'fast' } },
  ManagementChannelRecording: { valid: managementChannelRecording, wrong: { field: 'ready', value: 'yes' } },
  ConnectionRecording: { valid: connectionRecordingSample, wrong: { field: 'updates[0].audioMuted', value: 'no' } },
} satisfies Record<string, ContractCase>;

/** The caller scope of a NATS request made by management-api (interface B: never an operator scope). */
const natsScope = { organizationId: 'org-1', operator: false, principal: 'key-1' };

/** A list envelope case derived from its record case. */
const listCase = (c: ContractCase): ContractCase => ({
  valid: { value: [c.valid], '@odata.count': 1 },
  wrong: { field: `value[0].${c.wrong.field}`, value: c.wrong.value },
});

const table: ContractTable<typeof InterfaceBSchemas> = {
  ...records,
  UsageParticipantMinutesEntry: { valid: usageRecord.participantMinutes[0], wrong: { field: 'key', value: 'hd' } },
  UsageParticipantMinutes: {
    valid: { maxPixelCount: 2073600, usageParticipantMinutes: 3 },
    wrong: { field: 'maxPixelCount', value: '1080p' },
  },
  Address: { valid: address, wrong: { field: 'postalCode', value: 62701 } },
  Contact: { valid: contact, wrong: { field: 'emailAddress', value: null } },
  PaymentCard: {
    valid: { ...card, number: '4242424242424242', securityCode: '123' },
    wrong: { field: 'expiryYear', value: '2030' },
  },
  Plan: { valid: plan, wrong: { field: 'archivedOn', value: 'never' } },
  Identity: { valid: identity, wrong: { field: 'role', value: ['owner'] } },
  ChannelClaim: { valid: channelClaimSample, wrong: { field: 'allowedLayoutPriority', value: 'high' } },
  ClaimsPayload: { valid: claims, wrong: { field: 'clientRoles', value: 'speaker' } },
  ServerMessage: { valid: serverMessage, wrong: { field: 'userAlias', value: 1 } },
  ChannelConfigUpdate: {
    valid: {
      ...level,
      audioUnmuteDisabled: true,
      videoUnmuteDisabled: null,
      excludedUserIds: [],
      excludedDeviceIds: [],
      excludedClientIds: [],
      excludedConnectionIds: [],
    },
    wrong: { field: 'recordingMode', value: 1 },
  },
  ChannelUserConfig: {
    valid: {
      ...level,
      audioUnmuteDisabled: false,
      videoUnmuteDisabled: false,
      excludedDeviceIds: ['d'],
      excludedClientIds: null,
      excludedConnectionIds: null,
    },
    wrong: { field: 'excludedDeviceIds', value: 'd' },
  },
  ChannelDeviceConfig: {
    valid: {
      ...level,
      audioUnmuteDisabled: null,
      videoUnmuteDisabled: true,
      excludedClientIds: [],
      excludedConnectionIds: [],
    },
    wrong: { field: 'videoUnmuteDisabled', value: 'true' },
  },
  ChannelClientConfig: { valid: channelClientConfig, wrong: { field: 'audioUmuteDisabled', value: 'yes' } },
  ConnectionConfig: {
    valid: { ...level, audioUnmuteDisabled: true, videoUnmuteDisabled: true },
    wrong: { field: 'recording', value: 'on' },
  },
  CodecConfig: { valid: codec, wrong: { field: 'opus.bitrate', value: '64k' } },
  CodecBitrateConfig: { valid: codec.vp8, wrong: { field: 'disabled', value: 'no' } },
  CodecToggleConfig: { valid: codec.pcmu, wrong: { field: 'disabled', value: 0 } },
  SfuConfig: { valid: channelConfig.sfu, wrong: { field: 'videoOutput.simulcast.enabled', value: 'yes' } },
  SfuVideoOutputConfig: { valid: channelConfig.sfu.videoOutput, wrong: { field: 'simulcast', value: true } },
  SimulcastConfig: { valid: { enabled: false }, wrong: { field: 'enabled', value: 'no' } },
  McuConfig: { valid: channelConfig.mcu, wrong: { field: 'videoOutput.layoutCrop', value: 'no' } },
  McuAudioOutputConfig: { valid: { quality: 'low' }, wrong: { field: 'quality', value: 3 } },
  McuVideoOutputConfig: { valid: channelConfig.mcu.videoOutput, wrong: { field: 'width', value: '1280' } },
  InputEncodingConfig: { valid: { maxBitrate: 100, maxEncodings: 2 }, wrong: { field: 'maxEncodings', value: 1.5 } },
  RtmpConfig: { valid: channelConfig.rtmp, wrong: { field: 'url', value: false } },
  RecordingManagementOverride: { valid: { muxDisabled: true }, wrong: { field: 'muxDisabled', value: 'true' } },
  VideoEncoding: { valid: { bitrate: 300, frameRate: 15, scale: 0.25 }, wrong: { field: 'scale', value: 'quarter' } },
  // request bodies: a full record is accepted (server-managed fields are ignored, not rejected)
  ApiKeyCreateBody: { valid: { tag: 'ci' }, wrong: { field: 'tag', value: 1 } },
  ApiKeyUpdateBody: { valid: apiKey, wrong: { field: 'modifiedOn', value: 'now' } },
  ApplicationConfigCreateBody: {
    valid: {
      applicationId: 'app-2',
      sharedSecret: '<SHARED_SECRET>',
      webhooks: [{ name: 'inline', url: 'https://hooks.example.test' }],
    },
    wrong: { field: 'sharedSecret', value: 123 },
  },
  ApplicationConfigUpdateBody: { valid: applicationConfig, wrong: { field: 'applicationId', value: false } },
  ApplicationWebhookCreateBody: {
    valid: { applicationConfigId: 'appcfg-1', url: 'https://hooks.example.test' },
    wrong: { field: 'batch', value: 'yes' },
  },
  ApplicationWebhookUpdateBody: { valid: { disabled: true }, wrong: { field: 'events', value: ['no.such.event'] } },
  ChannelConfigCreateBody: {
    valid: { applicationConfigId: 'appcfg-1', channelIdPattern: 'room-1', priority: 5 },
    wrong: { field: 'priority', value: 2 ** 31 },
  },
  ChannelConfigUpdateBody: { valid: channelConfig, wrong: { field: 'bandwidthAdaptationPolicy', value: 'enabled' } },
  ChannelWebhookCreateBody: { valid: { channelConfigId: 'chcfg-1', events: [] }, wrong: { field: 'name', value: 1 } },
  ChannelWebhookUpdateBody: { valid: channelWebhook, wrong: { field: 'url', value: ['x'] } },
  OrganizationUpdateBody: {
    valid: { name: 'Renamed', address: { city: 'Paris' } },
    wrong: { field: 'additionalContacts', value: {} },
  },
  OrganizationCreateBody: {
    valid: { name: 'Customer Ltd', primaryContact: contact },
    wrong: { field: 'disabled', value: 'yes' },
  },
  OrganizationCreated: { valid: { ...organization, apiKey }, wrong: { field: 'apiKey.key', value: 42 } },
  PaymentMethodCreateBody: {
    valid: { type: 'card', card: { number: '4242424242424242', securityCode: '123', expiryMonth: 1 } },
    wrong: { field: 'type', value: 3 },
  },
  PaymentMethodUpdateBody: { valid: paymentMethod, wrong: { field: 'card.brand', value: 3 } },
  SubscriptionUpdateBody: {
    valid: { EnabledFeatures: ['recording'], platformPlan: { name: 'Pro' } },
    wrong: { field: 'EnabledFeatures', value: 'recording' },
  },
  UserAccountUpdateBody: {
    valid: { nickname: 'ada', lastSvcIosDownloadDate: NOW },
    wrong: { field: 'svcAppCreated', value: 'true' },
  },
  // action payloads
  SendMessagePayload: { valid: { message: serverMessage }, wrong: { field: 'message.message', value: 5 } },
  SendUserMessagePayload: { valid: { message: serverMessage, userId: 'u' }, wrong: { field: 'userId', value: 5 } },
  SendDeviceMessagePayload: {
    valid: { message: serverMessage, userId: 'u', deviceId: 'd' },
    wrong: { field: 'deviceId', value: 5 },
  },
  SendClientMessagePayload: {
    valid: { message: {}, userId: 'u', deviceId: 'd', clientId: 'c' },
    wrong: { field: 'clientId', value: 5 },
  },
  SendChannelMessagePayload: {
    valid: { channelId: 'room-1', message: serverMessage },
    wrong: { field: 'channelId', value: 5 },
  },
  SendChannelUserMessagePayload: {
    valid: { channelId: 'room-1', userId: 'u', message: serverMessage },
    wrong: { field: 'message', value: 'hi' },
  },
  SendChannelDeviceMessagePayload: {
    valid: { channelId: 'room-1', userId: 'u', deviceId: null, message: serverMessage },
    wrong: { field: 'message.clientRoles', value: 'host' },
  },
  SendChannelClientMessagePayload: {
    valid: { channelId: 'room-1', userId: 'u', deviceId: 'd', clientId: 'c', message: serverMessage },
    wrong: { field: 'clientId', value: [] },
  },
  KickChannelPayload: { valid: { channelId: 'room-1' }, wrong: { field: 'channelId', value: 1 } },
  KickUserPayload: { valid: { channelId: 'room-1', userId: 'u' }, wrong: { field: 'userId', value: {} } },
  KickDevicePayload: {
    valid: { channelId: 'room-1', userId: 'u', deviceId: 'd' },
    wrong: { field: 'deviceId', value: true },
  },
  KickClientPayload: {
    valid: { channelId: 'room-1', userId: 'u', deviceId: 'd', clientId: 'c' },
    wrong: { field: 'clientId', value: 0 },
  },
  KickConnectionPayload: {
    valid: { channelId: 'room-1', userId: 'u', deviceId: 'd', clientId: 'c', connectionId: 'conn-1' },
    wrong: { field: 'connectionId', value: 0 },
  },
  UpdateChannelPayload: {
    valid: { channelId: 'room-1', config: { recording: true, recordingMode: 'AudioVideo' } },
    wrong: { field: 'config.recording', value: 'yes' },
  },
  UpdateUserPayload: {
    valid: { channelId: 'room-1', userId: 'u', config: { audioMuted: true } },
    wrong: { field: 'config.excludedDeviceIds', value: 'd' },
  },
  UpdateDevicePayload: {
    valid: { channelId: 'room-1', userId: 'u', deviceId: 'd', config: {} },
    wrong: { field: 'config.videoMuted', value: 'no' },
  },
  UpdateClientPayload: {
    valid: { channelId: 'room-1', userId: 'u', deviceId: 'd', clientId: 'c', config: channelClientConfig },
    wrong: { field: 'config.audioUmuteDisabled', value: 'no' },
  },
  UpdateConnectionPayload: {
    valid: {
      channelId: 'room-1',
      userId: 'u',
      deviceId: 'd',
      clientId: 'c',
      connectionId: 'conn-1',
      config: { recording: false },
    },
    wrong: { field: 'config.recordingTag', value: 7 },
  },
  // response envelopes
  ApiKeyList: listCase(records.ApiKey),
  ApplicationConfigList: listCase(records.ApplicationConfig),
  ApplicationWebhookList: listCase(records.ApplicationWebhook),
  ChangeRecordList: listCase(records.ChangeRecord),
  UsageRecordList: listCase(records.UsageRecord),
  ChannelConfigList: listCase(records.ChannelConfig),
  ChannelWebhookList: listCase(records.ChannelWebhook),
  ManagementChannelRecordingList: listCase(records.ManagementChannelRecording),
  ConnectionRecordingList: listCase(records.ConnectionRecording),
  OrganizationList: listCase(records.Organization),
  PaymentMethodList: listCase(records.PaymentMethod),
  SubscriptionList: listCase(records.Subscription),
  UserAccountList: listCase(records.UserAccount),
  StringValueResponse: {
    valid: { value: 'https://files.example.test/room-1.mkv' },
    wrong: { field: 'value', value: 1 },
  },
  NumberValueResponse: { valid: { value: 1048576 }, wrong: { field: 'value', value: '1 MiB' } },
  // NATS requests of the forwarded reads (management-messaging.ts)
  ForwardedQueryOptions: {
    valid: { $filter: 'ready eq true', $top: '10', $count: 'true' },
    wrong: { field: '$top', value: 10 },
  },
  UsageListRequest: {
    valid: {
      scope: natsScope,
      applicationId: 'app-1',
      startTimestamp: NOW,
      endTimestamp: null,
      query: { $orderby: 'startTimestamp desc' },
    },
    wrong: { field: 'startTimestamp', value: '2030-01-01' },
  },
  ChannelRecordingsListRequest: {
    valid: { scope: natsScope, applicationId: 'app-1', query: {} },
    wrong: { field: 'applicationId', value: '' },
  },
  ChannelRecordingRef: {
    valid: { scope: natsScope, applicationId: 'app-1', channelId: 'room-1', channelRecordingId: UUID_A },
    wrong: { field: 'channelRecordingId', value: 'not-a-uuid' },
  },
  ChannelRecordingGetRequest: {
    valid: {
      scope: natsScope,
      applicationId: 'app-1',
      channelId: 'room-1',
      channelRecordingId: UUID_A,
      query: { $select: 'id,ready', $expand: 'x' },
    },
    wrong: { field: 'query.$select', value: ['id'] },
  },
  ChannelRecordingReadRequest: {
    valid: {
      scope: natsScope,
      applicationId: 'app-1',
      channelId: 'room-1',
      channelRecordingId: UUID_A,
      what: 'MuxJson',
    },
    wrong: { field: 'what', value: 'Json' },
  },
  ConnectionRecordingsListRequest: {
    valid: { scope: natsScope, applicationId: 'app-1', query: { $select: 'id' } },
    wrong: { field: 'query', value: '$select=id' },
  },
  ConnectionRecordingRef: {
    valid: { scope: natsScope, applicationId: 'app-1', connectionRecordingId: UUID_A },
    wrong: { field: 'scope.operator', value: 'no' },
  },
  ConnectionRecordingGetRequest: {
    valid: { scope: natsScope, applicationId: 'app-1', connectionRecordingId: UUID_A },
    wrong: { field: 'query', value: '$select=id' },
  },
  ConnectionRecordingReadRequest: {
    valid: { scope: natsScope, applicationId: 'app-1', connectionRecordingId: UUID_A, what: 'AudioUrl' },
    wrong: { field: 'what', value: 'MuxJson' },
  },
  StorageUsedSizeRequest: {
    valid: { scope: natsScope, applicationIds: ['app-1', 'app-2'] },
    wrong: { field: 'applicationIds', value: 'app-1' },
  },
};

describeContracts('interface B', InterfaceBSchemas, InterfaceBValidators, table, interfaceB);

const validators = InterfaceBValidators;

describe('channel config', () => {
  it('rejects 4 video encodings, naming videoEncodings', () => {
    const body = { ...channelConfig, videoEncodings: [{}, {}, {}, {}] };
    expect(validators.ChannelConfig.errors(body)).toEqual([
      { field: 'videoEncodings', message: 'must have at most 3 items' },
    ]);
    expect(
      validators.ChannelConfigCreateBody.errors({
        applicationConfigId: 'a',
        channelIdPattern: '*',
        videoEncodings: [{}, {}, {}, {}],
      }).map((e) => e.field),
    ).toEqual(['videoEncodings']);
    expect(validators.ChannelConfig.check({ ...channelConfig, videoEncodings: [{}, {}, {}] })).toBe(true);
  });

  it.each(['*', 'room-1', 'a'.repeat(256), 'ÄÖÜ.room_1:x'])('accepts the channel id pattern %j', (pattern) => {
    expect(validators.ChannelConfig.errors({ ...channelConfig, channelIdPattern: pattern })).toEqual([]);
  });

  it.each(['a*b', '', '**', 'room 1', ' room', 'a'.repeat(257), '*x'])(
    'rejects the channel id pattern %j, naming channelIdPattern',
    (pattern) => {
      expect(
        validators.ChannelConfig.errors({ ...channelConfig, channelIdPattern: pattern }).map((e) => e.field),
      ).toEqual(['channelIdPattern']);
    },
  );

  it('names nested codec fields', () => {
    const body = { applicationConfigId: 'a', channelIdPattern: '*', codec: { vp8: { bitrate: 'fast' } } };
    expect(validators.ChannelConfigCreateBody.errors(body)).toEqual([
      { field: 'codec.vp8.bitrate', message: 'expected number' },
    ]);
    expect(
      validators.ChannelConfigCreateBody.errors({ ...body, codec: { vp8: { disabled: false, bitrat: 5 } } }),
    ).toEqual([{ field: 'codec.vp8.bitrat', message: 'unknown field' }]);
  });

  it('keeps bandwidthAdaptationPolicy to Disabled|Enabled and priority to int32', () => {
    expect(validators.ChannelConfig.check({ ...channelConfig, bandwidthAdaptationPolicy: 'Disabled' })).toBe(true);
    expect(
      validators.ChannelConfig.errors({ ...channelConfig, bandwidthAdaptationPolicy: 'Auto' }).map((e) => e.field),
    ).toEqual(['bandwidthAdaptationPolicy']);
    expect(validators.ChannelConfig.check({ ...channelConfig, priority: -(2 ** 31) })).toBe(true);
    expect(validators.ChannelConfig.errors({ ...channelConfig, priority: 1.5 }).map((e) => e.field)).toEqual([
      'priority',
    ]);
  });

  it('requires applicationConfigId and channelIdPattern on create only', () => {
    expect(
      validators.ChannelConfigCreateBody.errors({})
        .map((e) => e.field)
        .sort(),
    ).toEqual(['applicationConfigId', 'channelIdPattern']);
    expect(validators.ChannelConfigUpdateBody.errors({})).toEqual([]);
    expect(validators.ChannelConfigUpdateBody.errors({ channelIdPattern: 'a*b' }).map((e) => e.field)).toEqual([
      'channelIdPattern',
    ]);
  });
});

describe('level configs', () => {
  const configs = ['ChannelConfigUpdate', 'ChannelUserConfig', 'ChannelDeviceConfig', 'ConnectionConfig'] as const;

  it('spells audioUmuteDisabled in the channel client config, and only there', () => {
    expect(validators.ChannelClientConfig.check({ audioUmuteDisabled: true })).toBe(true);
    expect(validators.ChannelClientConfig.errors({ audioUnmuteDisabled: true })).toEqual([
      { field: 'audioUnmuteDisabled', message: 'unknown field' },
    ]);
    for (const name of configs) {
      expect(validators[name].check({ audioUnmuteDisabled: true })).toBe(true);
      expect(validators[name].errors({ audioUmuteDisabled: true })).toEqual([
        { field: 'audioUmuteDisabled', message: 'unknown field' },
      ]);
    }
  });

  it('documents AudioVideo as the recordingMode default and example', () => {
    for (const name of [...configs, 'ChannelClientConfig'] as const) {
      const field = InterfaceBSchemas[name].properties.recordingMode.anyOf[0];
      expect(field).toMatchObject({ type: 'string', default: 'AudioVideo', examples: ['AudioVideo'] });
    }
  });

  it('accepts an empty config (every field optional and nullable)', () => {
    for (const name of [...configs, 'ChannelClientConfig'] as const) expect(validators[name].errors({})).toEqual([]);
  });
});

describe('request bodies', () => {
  it('types create bodies with the required fields required and the rest optional', () => {
    const minimal: interfaceB.ChannelConfigCreateBody = { applicationConfigId: 'a', channelIdPattern: '*' };
    // @ts-expect-error channelIdPattern is required on create
    const missing: interfaceB.ChannelConfigCreateBody = { applicationConfigId: 'a' };
    const partial: interfaceB.ChannelConfigUpdateBody = { priority: 1 };
    expect([
      validators.ChannelConfigCreateBody.check(minimal),
      validators.ChannelConfigCreateBody.check(missing),
      validators.ChannelConfigUpdateBody.check(partial),
    ]).toEqual([true, false, true]);
  });

  it('lists the server-managed fields, which are optional in both bodies', () => {
    expect(serverManagedFields(InterfaceBSchemas.ApiKeyCreateBody)).toEqual([
      'key',
      'id',
      'createdOn',
      'createdBy',
      'modifiedOn',
      'modifiedBy',
    ]);
    expect(serverManagedFields(InterfaceBSchemas.ApplicationConfigUpdateBody)).toEqual(['id', 'organizationId']);
    expect(serverManagedFields(InterfaceBSchemas.ApiKey)).toEqual([]);
    expect(validators.ApiKeyCreateBody.errors({})).toEqual([]);
    expect(validators.ApiKeyCreateBody.errors({ ...apiKey, key: 'sb_client_chosen' })).toEqual([]);
  });

  it('keeps the record types of server-managed fields (a wrong type is still rejected)', () => {
    expect(validators.ApiKeyCreateBody.errors({ createdOn: 'yesterday' }).map((e) => e.field)).toEqual(['createdOn']);
  });

  it('requires applicationConfigId when creating an application webhook', () => {
    expect(validators.ApplicationWebhookCreateBody.errors({ url: 'https://x.test' })).toEqual([
      { field: 'applicationConfigId', message: 'is required' },
    ]);
    expect(validators.ApplicationWebhookUpdateBody.errors({ url: 'https://x.test' })).toEqual([]);
  });

  it('accepts inline webhooks without their parent id in application config bodies', () => {
    expect(validators.ApplicationConfigCreateBody.check({ webhooks: [{ url: 'https://x.test', events: ['*'] }] })).toBe(
      true,
    );
    expect(validators.ApplicationConfig.check({ ...applicationConfig, webhooks: [{ url: 'https://x.test' }] })).toBe(
      false,
    );
  });

  it('restricts webhook events to catalog names and *', () => {
    expect(validators.ApplicationWebhookUpdateBody.check({ events: ['connection.recordings.ready', '*'] })).toBe(true);
    expect(
      validators.ApplicationWebhookUpdateBody.errors({ events: ['channel.activate'] }).map((e) => e.field),
    ).toEqual(['events[0]']);
  });
});

describe('records', () => {
  it('lists the change types the change log writes (Create, Update, Delete), and only those', () => {
    expect(CHANGE_TYPES).toEqual(['Create', 'Update', 'Delete']);
    for (const type of CHANGE_TYPES) expect(validators.ChangeRecord.check({ ...changeRecord, type })).toBe(true);
    for (const type of ['Created', 'Updated', 'Deleted', 'update', ''])
      expect(validators.ChangeRecord.errors({ ...changeRecord, type }).map((e) => e.field)).toEqual(['type']);
  });

  it('keeps the EnabledFeatures capitalisation of the subscription', () => {
    expect(Object.keys(InterfaceBSchemas.Subscription.properties)).toContain('EnabledFeatures');
    expect(validators.Subscription.errors({ ...subscription, enabledFeatures: [] }).map((e) => e.field)).toEqual([
      'enabledFeatures',
    ]);
  });

  it('has the 11 SDK download date fields on the user account, as integers', () => {
    expect(SDK_DOWNLOAD_DATE_FIELDS).toHaveLength(11);
    for (const f of SDK_DOWNLOAD_DATE_FIELDS) {
      expect(InterfaceBSchemas.UserAccount.properties[f]).toMatchObject({ type: 'integer' });
      expect(validators.UserAccount.errors({ ...userAccount, [f]: 1.5 }).map((e) => e.field)).toEqual([f]);
    }
  });

  it('requires applicationConfigId (non-null) on an application webhook, allows null channelConfigId on a channel webhook', () => {
    expect(
      validators.ApplicationWebhook.errors({ ...applicationWebhook, applicationConfigId: null }).map((e) => e.field),
    ).toEqual(['applicationConfigId']);
    expect(validators.ChannelWebhook.check({ ...channelWebhook, channelConfigId: null })).toBe(true);
  });

  it('gives the interface B channel recording every interface A field but connectionRecordings', () => {
    const a = Object.keys(InterfaceBSchemas.ManagementChannelRecording.properties).sort();
    const b = Object.keys(channelRecordingSample)
      .filter((k) => k !== 'connectionRecordings')
      .sort();
    expect(a).toEqual(b);
    expect(validators.ManagementChannelRecording.errors(channelRecordingSample)).toEqual([
      { field: 'connectionRecordings', message: 'unknown field' },
    ]);
  });

  it('accepts $count on lists and nothing else', () => {
    expect(validators.ApiKeyList.check({ value: [] })).toBe(true);
    expect(validators.ApiKeyList.errors({ value: [], '@odata.nextLink': 'x' })).toEqual([
      { field: '@odata.nextLink', message: 'unknown field' },
    ]);
  });
});

describe('actions', () => {
  it('maps every action name of the HTTP contract to a payload schema', () => {
    expect([...ACTION_NAMES].sort()).toEqual(
      [
        'Token',
        'SendMessage',
        'SendUserMessage',
        'SendDeviceMessage',
        'SendClientMessage',
        'SendChannelMessage',
        'SendChannelUserMessage',
        'SendChannelDeviceMessage',
        'SendChannelClientMessage',
        'KickChannel',
        'KickUser',
        'KickDevice',
        'KickClient',
        'KickConnection',
        'UpdateChannel',
        'UpdateUser',
        'UpdateDevice',
        'UpdateClient',
        'UpdateConnection',
      ].sort(),
    );
    for (const name of ACTION_NAMES) {
      const schema = ActionPayloads[name];
      expect(schema.$id).toBe(name === 'Token' ? 'ClaimsPayload' : `${name}Payload`);
      expect(Object.values(InterfaceBSchemas)).toContain(schema);
    }
    expect(isActionName('KickUser')).toBe(true);
    expect(isActionName('toString')).toBe(false);
    expect(interfaceB.TokenRequest).toBe(interfaceB.ClaimsPayload);
  });

  it('requires the target ids (null allowed) and names a missing one', () => {
    expect(ActionValidators.KickUser.errors({ channelId: 'room-1' })).toEqual([
      { field: 'userId', message: 'is required' },
    ]);
    expect(ActionValidators.KickUser.check({ channelId: 'room-1', userId: null })).toBe(true);
    expect(ActionValidators.Token.check({})).toBe(true);
  });

  it('uses the level config of the target in update actions', () => {
    expect(
      ActionValidators.UpdateClient.check({
        channelId: 'c',
        userId: 'u',
        deviceId: 'd',
        clientId: 'c',
        config: { audioUmuteDisabled: true },
      }),
    ).toBe(true);
    expect(
      ActionValidators.UpdateConnection.errors({
        channelId: 'c',
        userId: 'u',
        deviceId: 'd',
        clientId: 'c',
        connectionId: 'x',
        config: { audioUmuteDisabled: true },
      }),
    ).toEqual([{ field: 'config.audioUmuteDisabled', message: 'unknown field' }]);
  });
});
