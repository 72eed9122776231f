import { defineEntityModel, type EntityModel } from '@switchboard/odata';
import type { EntitySetSpec } from '../common/record-reader.js';

export const identityModel: EntityModel = defineEntityModel({
  name: 'Identity',
  key: 'id',
  properties: [
    ...['id', 'firstName', 'lastName', 'username', 'nickname', 'emailAddress', 'phoneNumber', 'pictureUrl', 'role'].map(
      (name) => ({ name, kind: 'string' as const }),
    ),
    { name: 'createdOn', kind: 'datetime-ms' },
    { name: 'modifiedOn', kind: 'datetime-ms' },
  ],
});

/**
 * User accounts; `identities` is a navigation property stored inline (always present; `$expand` takes nested options).
 */
export const userAccountModel = defineEntityModel({
  name: 'UserAccount',
  key: 'id',
  table: 'management.user_account',
  properties: [
    { name: 'svcAppCreated', kind: 'boolean', column: 'svc_app_created' },
    { name: 'svcChannelCreated', kind: 'boolean', column: 'svc_channel_created' },
    { name: 'svcConnectionCreated', kind: 'boolean', column: 'svc_connection_created' },
    { name: 'lastSvcAndroidDownloadDate', kind: 'datetime-ms', column: 'last_svc_android_download_date' },
    { name: 'lastSvcJavaDownloadDate', kind: 'datetime-ms', column: 'last_svc_java_download_date' },
    { name: 'lastSvcNetDownloadDate', kind: 'datetime-ms', column: 'last_svc_net_download_date' },
    { name: 'lastSvcUnityDownloadDate', kind: 'datetime-ms', column: 'last_svc_unity_download_date' },
    { name: 'lastSvcHololensDownloadDate', kind: 'datetime-ms', column: 'last_svc_hololens_download_date' },
    { name: 'lastSvcWebDownloadDate', kind: 'datetime-ms', column: 'last_svc_web_download_date' },
    { name: 'lastSvcIosDownloadDate', kind: 'datetime-ms', column: 'last_svc_ios_download_date' },
    { name: 'lastSvcMacosDownloadDate', kind: 'datetime-ms', column: 'last_svc_macos_download_date' },
    { name: 'lastSvcTVosDownloadDate', kind: 'datetime-ms', column: 'last_svc_tvos_download_date' },
    { name: 'lastSvcUwpDownloadDate', kind: 'datetime-ms', column: 'last_svc_uwp_download_date' },
    { name: 'lastSvcXamarinDownloadDate', kind: 'datetime-ms', column: 'last_svc_xamarin_download_date' },
    { name: 'id', kind: 'guid' },
    { name: 'firstName', kind: 'string', column: 'first_name' },
    { name: 'lastName', kind: 'string', column: 'last_name' },
    { name: 'username', kind: 'string', column: 'username' },
    { name: 'nickname', kind: 'string', column: 'nickname' },
    { name: 'emailAddress', kind: 'string', column: 'email_address' },
    { name: 'phoneNumber', kind: 'string', column: 'phone_number' },
    { name: 'pictureUrl', kind: 'string', column: 'picture_url' },
    { name: 'role', kind: 'string', column: 'role' },
    { name: 'createdOn', kind: 'datetime-ms', column: 'created_on' },
    { name: 'modifiedOn', kind: 'datetime-ms', column: 'modified_on' },
  ],
  navigations: [{ name: 'identities', many: true, target: identityModel, relation: { kind: 'jsonb' } }],
});

export const USER_ACCOUNTS: EntitySetSpec = {
  name: 'UserAccount',
  model: userAccountModel,
  tenantColumn: 'organization_id',
  inline: { identities: 'identities' },
  defaultOrder: ['"e"."created_on"'],
};
