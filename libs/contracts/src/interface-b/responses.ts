/**
 * Interface B response envelopes (service-spec.md 4.B rule 6, http-contract.md): lists are
 * `{ "value": [record...] }` (plus `@odata.count` when `$count=true`), scalar reads `{ "value": x }`.
 * Also the interface B channel recording (the interface A record without `connectionRecordings`).
 *
 * A list schema describes full records; a `$select` answer carries only the selected properties.
 */
import { Type, type Static, type TObject, type TOptional, type TArray, type TInteger } from '@sinclair/typebox';
import { ChannelRecording, ConnectionRecording } from '../interface-a/recordings.js';
import { record } from '../interface-a/record-schema.js';
import { ChannelConfig } from './channel-config.js';
import {
  ApiKey,
  ApplicationConfig,
  ApplicationWebhook,
  ChangeRecord,
  ChannelWebhook,
  Organization,
  PaymentMethod,
  Subscription,
  UsageRecord,
  UserAccount,
} from './records.js';

/** Channel recording of interface B: the admin channel recording without `connectionRecordings`; same field types. */
export const ManagementChannelRecording = record(
  'ManagementChannelRecording',
  Type.Omit(ChannelRecording, ['connectionRecordings']).properties,
  'A channel recording (interface B): the interface A channel recording without its connection recordings.',
);
export type ManagementChannelRecording = Static<typeof ManagementChannelRecording>;

type ListEnvelope<T extends TObject> = TObject<{ value: TArray<T>; '@odata.count': TOptional<TInteger> }>;

/** `{ value: T[], '@odata.count'? }` named `<T's $id>List`. */
export function listOf<T extends TObject>(item: T): ListEnvelope<T> {
  return record(
    `${item.$id}List`,
    {
      value: Type.Array(item),
      '@odata.count': Type.Optional(
        Type.Integer({ minimum: 0, description: 'Total number of matching records (with `$count=true`).' }),
      ),
    },
    `A list of ${item.$id} records.`,
  );
}

export const ApiKeyList = listOf(ApiKey);
export type ApiKeyList = Static<typeof ApiKeyList>;
export const ApplicationConfigList = listOf(ApplicationConfig);
export type ApplicationConfigList = Static<typeof ApplicationConfigList>;
export const ApplicationWebhookList = listOf(ApplicationWebhook);
export type ApplicationWebhookList = Static<typeof ApplicationWebhookList>;
export const ChangeRecordList = listOf(ChangeRecord);
export type ChangeRecordList = Static<typeof ChangeRecordList>;
export const UsageRecordList = listOf(UsageRecord);
export type UsageRecordList = Static<typeof UsageRecordList>;
export const ChannelConfigList = listOf(ChannelConfig);
export type ChannelConfigList = Static<typeof ChannelConfigList>;
export const ChannelWebhookList = listOf(ChannelWebhook);
export type ChannelWebhookList = Static<typeof ChannelWebhookList>;
export const ManagementChannelRecordingList = listOf(ManagementChannelRecording);
export type ManagementChannelRecordingList = Static<typeof ManagementChannelRecordingList>;
export const ConnectionRecordingList = listOf(ConnectionRecording);
export type ConnectionRecordingList = Static<typeof ConnectionRecordingList>;
export const OrganizationList = listOf(Organization);
export type OrganizationList = Static<typeof OrganizationList>;
export const PaymentMethodList = listOf(PaymentMethod);
export type PaymentMethodList = Static<typeof PaymentMethodList>;
export const SubscriptionList = listOf(Subscription);
export type SubscriptionList = Static<typeof SubscriptionList>;
export const UserAccountList = listOf(UserAccount);
export type UserAccountList = Static<typeof UserAccountList>;

export const StringValueResponse = record(
  'StringValueResponse',
  { value: Type.String() },
  'A string-valued read (recording JSON or URL, a client token from the Token action).',
);
export type StringValueResponse = Static<typeof StringValueResponse>;

export const NumberValueResponse = record(
  'NumberValueResponse',
  { value: Type.Number() },
  'A number-valued read (recording storage used size, in bytes).',
);
export type NumberValueResponse = Static<typeof NumberValueResponse>;
