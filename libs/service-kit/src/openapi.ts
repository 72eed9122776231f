import { RequestMethod, SetMetadata } from '@nestjs/common';
import type { TSchema } from '@sinclair/typebox';

/**
 * OpenAPI documents generated from the controllers themselves: paths and methods come from Nest's
 * route metadata, bodies and responses from the contract schemas named in `@ApiDoc`. Only routes
 * carrying `@ApiDoc` are published (health, metrics and RPC handlers are not API surface).
 */
export interface ApiDocOptions {
  summary: string;
  tags?: string[];
  body?: TSchema;
  /** Response schema of the success status. */
  response?: TSchema;
  /** Success status (default 200; 201 for creates; 204 has no body). */
  status?: number;
  query?: Array<{ name: string; description: string; schema: Record<string, unknown>; required?: boolean }>;
  /** Extra error statuses this operation documents, beyond the common ones. */
  errors?: number[];
  description?: string;
}

const API_DOC = 'switchboard:api-doc';
export const ApiDoc = (options: ApiDocOptions) => SetMetadata(API_DOC, options);

type Ctor = new (...args: never[]) => unknown;

export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
  /** Path prefixes each controller path is published under (e.g. `/admin/api/v1.0`). */
  security: Record<string, Record<string, unknown>>;
  /** Schema of every error response body. */
  errorSchema: TSchema;
  errorMediaType: string;
  commonErrors: number[];
}

const METHODS: Record<number, string> = {
  [RequestMethod.GET]: 'get',
  [RequestMethod.POST]: 'post',
  [RequestMethod.PUT]: 'put',
  [RequestMethod.PATCH]: 'patch',
  [RequestMethod.DELETE]: 'delete',
};

export function buildOpenApi(info: OpenApiInfo, controllers: Ctor[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const schemas: Record<string, unknown> = {};
  const ref = (schema: TSchema): Record<string, unknown> => {
    const plain = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
    collect(plain, schemas);
    return typeof schema.$id === 'string' ? { $ref: `#/components/schemas/${schema.$id}` } : plain;
  };
  const errorRef = ref(info.errorSchema);
  for (const controller of controllers) {
    const prefixes = asArray(Reflect.getMetadata('path', controller) as string | string[] | undefined);
    for (const name of Object.getOwnPropertyNames(controller.prototype)) {
      const handler = (controller.prototype as Record<string, unknown>)[name];
      if (typeof handler !== 'function') continue;
      const doc = Reflect.getMetadata(API_DOC, handler) as ApiDocOptions | undefined;
      if (!doc) continue;
      const method = METHODS[Reflect.getMetadata('method', handler) as number];
      if (!method) continue;
      for (const prefix of prefixes) {
        for (const sub of asArray(Reflect.getMetadata('path', handler) as string | string[] | undefined)) {
          const path = toOpenApiPath(prefix, sub);
          const status = String(doc.status ?? (method === 'post' ? 201 : 200));
          const responses: Record<string, unknown> = {
            [status]: doc.response
              ? { description: 'Success', content: { 'application/json': { schema: ref(doc.response) } } }
              : { description: 'Success' },
          };
          // A body can be too large (413) or not UTF-8 JSON (415): the framework's refusals (http-edge.ts).
          for (const code of [...info.commonErrors, ...(doc.body ? [413, 415] : []), ...(doc.errors ?? [])]) {
            responses[String(code)] = {
              description: `Error ${code}`,
              content: { [info.errorMediaType]: { schema: errorRef } },
            };
          }
          const parameters = [
            ...[...path.matchAll(/\{([^}]+)\}/g)].map((m) => ({
              name: m[1],
              in: 'path',
              required: true,
              schema: { type: 'string' },
            })),
            ...(doc.query ?? []).map((q) => ({
              name: q.name,
              in: 'query',
              required: q.required ?? false,
              description: q.description,
              schema: q.schema,
            })),
          ];
          (paths[path] ??= {})[method] = {
            summary: doc.summary,
            ...(doc.description ? { description: doc.description } : {}),
            tags: doc.tags,
            operationId: `${controller.name.replace(/Controller$/, '')}_${name}${prefixes.length > 1 && prefix !== prefixes[0] ? `_${prefixes.indexOf(prefix)}` : ''}`,
            parameters,
            ...(doc.body
              ? { requestBody: { required: true, content: { 'application/json': { schema: ref(doc.body) } } } }
              : {}),
            responses,
          };
        }
      }
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, description: info.description },
    security: Object.keys(info.security).map((k) => ({ [k]: [] })),
    paths,
    components: { schemas, securitySchemes: info.security },
  };
}

function asArray(v: string | string[] | undefined): string[] {
  return v === undefined ? [''] : Array.isArray(v) ? v : [v];
}

function toOpenApiPath(prefix: string, sub: string): string {
  const joined = `/${[prefix, sub]
    .map((p) => p.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/')}`;
  return joined.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** Moves every nested schema with an `$id` into components and replaces it with a `$ref`. */
function collect(node: unknown, schemas: Record<string, unknown>, root = true): unknown {
  if (Array.isArray(node)) return node.map((n) => collect(n, schemas, false));
  if (!node || typeof node !== 'object') return node;
  const obj = node as Record<string, unknown>;
  for (const [k, v] of Object.entries(obj)) obj[k] = collect(v, schemas, false);
  if (typeof obj.$id === 'string') {
    const { $id, ...rest } = obj;
    schemas[$id] = rest;
    return root ? obj : { $ref: `#/components/schemas/${$id}` };
  }
  return obj;
}
