import type { TSchema } from '@sinclair/typebox';
import type { ApiDocOptions } from '@switchboard/service-kit';
import { API_VERSION_DOC, LIST_QUERY_DOC, SINGLE_QUERY_DOC } from './odata-query.js';

/** What an entity set's route adds to its usual OpenAPI (a description, other errors or query options). */
type MoreDoc = Partial<Pick<ApiDocOptions, 'description' | 'errors' | 'query'>>;

/** OpenAPI options of the routes every entity set has (list, create, get, replace and patch), grouped under `tag`. */
export function entitySetDocs(tag: string) {
  const tags = [tag];
  return {
    tags,
    list: (summary: string, response: TSchema, more: MoreDoc = {}): ApiDocOptions => ({
      summary,
      tags,
      response,
      query: LIST_QUERY_DOC,
      ...more,
    }),
    create: (summary: string, body: TSchema, response: TSchema, more: MoreDoc = {}): ApiDocOptions => ({
      summary,
      tags,
      body,
      response,
      status: 201,
      query: API_VERSION_DOC,
      ...more,
    }),
    get: (summary: string, response: TSchema, more: MoreDoc = {}): ApiDocOptions => ({
      summary,
      tags,
      response,
      errors: [404],
      query: SINGLE_QUERY_DOC,
      ...more,
    }),
    /** PUT (replace) and PATCH (merge) take the same body and answer the same entity. */
    update: (summary: string, body: TSchema, response: TSchema, more: MoreDoc = {}): ApiDocOptions => ({
      summary,
      tags,
      body,
      response,
      errors: [404],
      query: API_VERSION_DOC,
      ...more,
    }),
  };
}
