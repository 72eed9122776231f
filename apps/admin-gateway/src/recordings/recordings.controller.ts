import {
  Body,
  Controller,
  Delete,
  Get,
  Header,
  HttpCode,
  Param,
  Patch,
  Query,
  type Type as NestType,
} from '@nestjs/common';
import { DomainError, RecordingSubjects, type CallerScope } from '@switchboard/contracts';
import { ApiDoc, NatsClient } from '@switchboard/service-kit';
import { Scope } from '../auth/scope.decorator.js';
import { BodyPipe, checkId, checkUuid, optionalInt } from '../http/params.js';
import { ADMIN_PREFIXES } from '../http/prefixes.js';
import { READ_ERRORS, WRITE_ERRORS } from '../http/routes.js';
import { RECORDING_ROUTES, type RecordingRoute } from './recording-routes.js';

const UUID_PARAMS = new Set(['channelRecordingId', 'connectionRecordingId']);
const MAX_UNIX_SECONDS = 253402300799;

const WINDOW_DOC = [
  {
    name: 'timestampMin',
    description: 'Earliest start, Unix seconds',
    schema: { type: 'integer', format: 'int64', minimum: 0 },
  },
  {
    name: 'timestampMax',
    description: 'Latest start, Unix seconds',
    schema: { type: 'integer', format: 'int64', minimum: 0 },
  },
];
const PAGE_DOC = [
  { name: 'skip', description: 'Records to skip (default 0)', schema: { type: 'integer', minimum: 0 } },
  {
    name: 'take',
    description: 'Records to return (default 100, at most 1000)',
    schema: { type: 'integer', minimum: 0, maximum: 1000 },
  },
];

/**
 * Path parameters of a route, each validated (ids bounded, recording ids UUIDs): 400 naming the parameter otherwise.
 */
function pathParams(route: RecordingRoute, raw: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [, name] of route.path.matchAll(/:([A-Za-z]+)/g))
    out[name!] = (UUID_PARAMS.has(name!) ? checkUuid : checkId)(name!, raw[name!]);
  return out;
}

function queryParams(route: RecordingRoute, raw: Record<string, unknown>): Record<string, number> {
  if (!route.query) return {};
  const out: Record<string, number | undefined> = {
    timestampMin: optionalInt('timestampMin', raw.timestampMin, 0, MAX_UNIX_SECONDS),
    timestampMax: optionalInt('timestampMax', raw.timestampMax, 0, MAX_UNIX_SECONDS),
  };
  if (out.timestampMin !== undefined && out.timestampMax !== undefined && out.timestampMin > out.timestampMax) {
    throw new DomainError('ValidationFailed', 'The query parameter timestampMax is invalid.', [
      { field: 'timestampMax', message: 'must not be before timestampMin' },
    ]);
  }
  if (route.query === 'window') {
    out.skip = optionalInt('skip', raw.skip, 0, 2147483647);
    out.take = optionalInt('take', raw.take, 0, 1000);
  }
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as Record<string, number>;
}

/**
 * The recording routes of interface A, generated from RECORDING_ROUTES: one handler per route,
 * decorated like a hand-written one (so the OpenAPI document lists each), forwarding to
 * recording-service as one query or command of the route's kind.
 */
function buildController(): NestType<unknown> {
  class RecordingsController {
    constructor(readonly nats: NatsClient) {}
  }
  Reflect.defineMetadata('design:paramtypes', [NatsClient], RecordingsController);
  const proto = RecordingsController.prototype as unknown as Record<string, unknown>;
  RECORDING_ROUTES.forEach((route, i) => {
    const name = `${route.method}_${route.kind.replace(/\W/g, '_')}_${i}`;
    const isCommand = route.method !== 'get';
    const bodyPipe = route.body ? new BodyPipe(route.body) : undefined;
    proto[name] = async function (
      this: RecordingsController,
      scope: CallerScope,
      params: Record<string, string>,
      query: Record<string, unknown>,
      body: unknown,
    ) {
      const fields = { kind: route.kind, ...pathParams(route, params), ...queryParams(route, query) };
      if (bodyPipe) Object.assign(fields, { patch: bodyPipe.transform(body) });
      if (isCommand) {
        await this.nats.request(RecordingSubjects.command, { scope, command: fields } as never);
        return undefined;
      }
      const result = await this.nats.request(RecordingSubjects.query, { scope, query: fields } as never);
      // String reads answer a JSON string (http-contract.md), not bare text.
      return route.response?.type === 'string' ? JSON.stringify(result) : result;
    };
    const descriptor = Object.getOwnPropertyDescriptor(proto, name)!;
    const verb = route.method === 'get' ? Get : route.method === 'patch' ? Patch : Delete;
    const decorators: MethodDecorator[] = [
      verb(route.path),
      ApiDoc({
        summary: route.summary,
        tags: ['Recordings'],
        ...(route.response ? { response: route.response } : {}),
        ...(route.body ? { body: route.body } : {}),
        ...(isCommand ? { status: 204 } : {}),
        ...(route.query ? { query: route.query === 'window' ? [...WINDOW_DOC, ...PAGE_DOC] : WINDOW_DOC } : {}),
        errors: isCommand ? WRITE_ERRORS : READ_ERRORS,
      }),
    ];
    if (isCommand) decorators.push(HttpCode(204));
    if (route.response?.type === 'string') decorators.push(Header('Content-Type', 'application/json; charset=utf-8'));
    Reflect.decorate(decorators, proto, name, descriptor);
    Scope()(proto, name, 0);
    Param()(proto, name, 1);
    Query()(proto, name, 2);
    Body()(proto, name, 3);
    Object.defineProperty(proto, name, descriptor);
  });
  Controller([...ADMIN_PREFIXES])(RecordingsController);
  return RecordingsController;
}

export const RecordingsController = buildController();
