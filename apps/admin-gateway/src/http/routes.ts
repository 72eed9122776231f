import { applyDecorators, Get, Header } from '@nestjs/common';
import type { TSchema } from '@sinclair/typebox';
import { MessageBody } from '@switchboard/contracts';
import type { ApiDocOptions } from '@switchboard/service-kit';

/** Path building blocks of http-contract.md, joined into each route's path. */
export const APPLICATION_PATH = 'applications/:applicationId';
export const CHANNEL_PATH = `${APPLICATION_PATH}/channels/:channelId`;
/** A device by its owner, under an application or a channel path. */
export const DEVICE_SUBPATH = 'users/:userId/devices/:deviceId';
/** A client by its owners (user, device), under an application or a channel path. */
export const CLIENT_SUBPATH = `${DEVICE_SUBPATH}/clients/:clientId`;
export const CONNECTION_PATH = `${CHANNEL_PATH}/${CLIENT_SUBPATH}/connections/:connectionId`;

/** Error statuses documented on every runtime operation beyond 400/401. */
export const READ_ERRORS = [403, 404, 503, 504];
export const WRITE_ERRORS = [403, 404, 413, 503, 504];
/**
 * Lists across applications: 403 only for an address outside the allowlist (or, on operator routes, a credential that
 * is not an operator's).
 */
export const LIST_ERRORS = [403, 503, 504];
export const OPERATOR_ERRORS = [403, 503, 504];

/**
 * A GET answering a runtime read: the body is the registry's JSON text as it came
 * (`RuntimeClient.query`), so the route declares its media type itself.
 */
export const GetJson = (path?: string) =>
  applyDecorators(Get(path), Header('Content-Type', 'application/json; charset=utf-8'));

/**
 * The `@ApiDoc` options of the routes one controller repeats for its level (get, update, kick, message),
 * so each route names only what differs: its summary and schema.
 */
export function routeDocs(tag: string) {
  const tags = [tag];
  return {
    read: (summary: string, response: TSchema, description?: string): ApiDocOptions => ({
      summary,
      ...(description ? { description } : {}),
      tags,
      response,
      errors: READ_ERRORS,
    }),
    update: (summary: string, body: TSchema): ApiDocOptions => ({
      summary,
      tags,
      body,
      status: 204,
      errors: WRITE_ERRORS,
    }),
    message: (summary: string): ApiDocOptions => ({
      summary,
      tags,
      body: MessageBody,
      status: 204,
      errors: WRITE_ERRORS,
    }),
    kick: (summary: string): ApiDocOptions => ({ summary, tags, status: 204, errors: READ_ERRORS }),
  };
}
