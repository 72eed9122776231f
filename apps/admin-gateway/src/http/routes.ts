import { applyDecorators, Get, Header } from '@nestjs/common';

/** Path building blocks of http-contract.md: `C` = a channel, `UDC` = a client by its owners. */
export const A = 'applications/:applicationId';
export const C = `${A}/channels/:channelId`;
export const UDC = 'users/:userId/devices/:deviceId/clients/:clientId';

/** The path ids of the runtime routes, as `@Ids()` gives them. */
export interface AppIds {
  applicationId: string;
}
export interface ChannelIds extends AppIds {
  channelId: string;
}
export interface UserIds extends AppIds {
  userId: string;
}
export interface DeviceIds extends UserIds {
  deviceId: string;
}
export interface ClientIds extends DeviceIds {
  clientId: string;
}
export interface ChannelUserIds extends ChannelIds {
  userId: string;
}
export interface ChannelDeviceIds extends ChannelUserIds {
  deviceId: string;
}
export interface ChannelClientIds extends ChannelDeviceIds {
  clientId: string;
}
export interface ConnectionIds extends ChannelClientIds {
  connectionId: string;
}

/** Error statuses documented on every runtime operation beyond 400/401. */
export const READ_ERRORS = [403, 404, 503, 504];
export const WRITE_ERRORS = [403, 404, 413, 503, 504];
/**
 * Lists across applications: 403 only for an address outside the allowlist (or, on operator routes, a credential that
 * is not an operator's).
 */
export const LIST_ERRORS = [403, 503, 504];
export const OPERATOR_ERRORS = LIST_ERRORS;

/**
 * A GET answering a runtime read: the body is the registry's JSON text as it came
 * (`RuntimeClient.query`), so the route declares its media type itself.
 */
export const GetJson = (path?: string) =>
  applyDecorators(Get(path), Header('Content-Type', 'application/json; charset=utf-8'));
