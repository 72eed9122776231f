import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  DomainError,
  isUuid,
  type ManagementReadSubjects,
  odataQueryErrorCodeOf,
  type ForwardedQueryOptions,
  type RequestMap,
  type RequestOf,
  type ResponseOf,
} from '@switchboard/contracts';
import { FORWARDED_SINGLE_READ_OPTIONS, type QueryParams } from '@switchboard/odata';
import { NatsClient } from '@switchboard/service-kit';
import type { DataSource } from 'typeorm';
import { toScope, type Caller } from '../auth/caller.js';
import { invalid } from '../common/bodies.js';
import { checkForwardedQuery, LIST_QUERY_DOC, ODataQueryError, SINGLE_QUERY_DOC } from '../common/odata-query.js';

/**
 * Options the forwarded reads take (4.B rules 4 and 5), grammar and limits checked here; the
 * answering service (recording-service, usage-aggregator, webhook-worker) binds the names to the
 * record's properties with `@switchboard/odata` (`parseForwardedQuery`). None of these records has
 * navigation properties, so any `$expand` name is a 400 UnknownProperty, as on every other entity
 * set without navigations, and `$expand=*` expands nothing.
 */
export const FORWARDED_LIST_OPTIONS = ['$filter', '$orderby', '$top', '$skip', '$count', '$select', '$expand'] as const;
/** Single reads: the list the answering services bind with (`@switchboard/odata`), so the two cannot drift apart. */
export const FORWARDED_SINGLE_OPTIONS = FORWARDED_SINGLE_READ_OPTIONS;
/** Scalar reads (4.B "numeric reads") take what a single read takes; they have nothing to select. */
export const FORWARDED_SCALAR_OPTIONS = FORWARDED_SINGLE_READ_OPTIONS;

const forwardedOrVersion = (options: readonly string[]) => (q: { name: string }) =>
  options.includes(q.name) || q.name === 'api-version';
/** OpenAPI: the query options a forwarded list read takes. */
export const FORWARDED_LIST_QUERY_DOC = LIST_QUERY_DOC.filter(forwardedOrVersion(FORWARDED_LIST_OPTIONS));
/** OpenAPI: the query options a forwarded single read takes. */
export const FORWARDED_SINGLE_QUERY_DOC = SINGLE_QUERY_DOC.filter(forwardedOrVersion(FORWARDED_SINGLE_OPTIONS));

/** OpenAPI: how the answering service binds `$select` and `$expand` of a forwarded read of `record`s. */
export function forwardedNamesDoc(record: string): string {
  return ` \`$select\` and \`$expand\` name properties of the ${record} (an unknown name is a 400 \`UnknownProperty\`); a ${record} has no navigation properties, so \`$expand\` accepts no name (\`*\` expands nothing).`;
}

type ApplicationListSubject =
  typeof ManagementReadSubjects.channelRecordingsList | typeof ManagementReadSubjects.connectionRecordingsList;

/**
 * Interface B reads served by other services over NATS: `usage-aggregator` and `recording-service`
 * (`ManagementReadSubjects`), `webhook-worker` (`WebhookSubjects.deliveries*`). Tenancy is settled here: the
 * application must be one of the caller's
 * organization (404 otherwise, exactly like a missing one) before anything is asked. Nobody
 * answering is a 503, a late answer a 504 (`NatsClient`).
 */
@Injectable()
export class ForwardedReadsService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly nats: NatsClient,
  ) {}

  /** Throws NotFound unless `applicationId` is an application of the caller's organization. */
  async ownApplication(caller: Caller, applicationId: string): Promise<void> {
    const rows = (await this.ds.query(
      'SELECT 1 FROM management.application_config WHERE application_id = $1 AND organization_id = $2',
      [applicationId, caller.organizationId],
    )) as unknown[];
    if (rows.length === 0) throw new DomainError('NotFound', `No application '${applicationId.slice(0, 128)}'.`);
  }

  async applicationIds(caller: Caller): Promise<string[]> {
    const rows = (await this.ds.query(
      'SELECT application_id FROM management.application_config WHERE organization_id = $1 ORDER BY application_id',
      [caller.organizationId],
    )) as Array<{
      application_id: string;
    }>;
    return rows.map((r) => r.application_id);
  }

  /** The list options to pass through, grammar and limits checked. */
  listOptions(query: QueryParams | undefined, what: string): ForwardedQueryOptions {
    return checkForwardedQuery(query, FORWARDED_LIST_OPTIONS, what).options as ForwardedQueryOptions;
  }

  /**
   * The options of a single-record read (`$select` and `$expand`), grammar
   * and limits checked, passed through to the answering service, which binds the names to the
   * record's properties (an unknown one is its UnknownProperty, see `downstreamQueryError`).
   */
  singleQueryOptions(query: QueryParams | undefined, what: string): ForwardedQueryOptions {
    return checkForwardedQuery(query, FORWARDED_SINGLE_OPTIONS, what).options as ForwardedQueryOptions;
  }

  /**
   * Scalar reads take `$select` and `$expand` (4.B "numeric reads"); they have nothing to select: checked, then
   * ignored.
   */
  scalarOptions(query: QueryParams | undefined, what: string): void {
    checkForwardedQuery(query, FORWARDED_SCALAR_OPTIONS, what);
  }

  /** The list of an application's records (recordings), forwarded once the application is the caller's. */
  async listOfApplication<S extends ApplicationListSubject>(
    caller: Caller,
    applicationId: string,
    query: QueryParams | undefined,
    entitySet: string,
    subject: S,
  ) {
    const options = this.listOptions(query, entitySet);
    await this.ownApplication(caller, applicationId);
    const request = { scope: this.scope(caller), applicationId, query: options } as RequestOf<S>;
    return listEnvelope((await this.request(subject, request)) as ResponseOf<S> & { value: unknown[] });
  }

  scope(caller: Caller) {
    return toScope(caller);
  }

  /** Sends one request; an OData option the answering service refused becomes the OData error of that option. */
  request<S extends keyof RequestMap>(subject: S, payload: RequestOf<S>): Promise<ResponseOf<S>> {
    return this.nats.request(subject, payload).catch((e: unknown) => {
      throw downstreamQueryError(e);
    });
  }
}

/**
 * Services that bind forwarded options answer a refused one as `ValidationFailed` with one detail
 * naming the option (`field: '$filter'`), the OData code leading the message (`UnknownProperty: ...`).
 */
export function downstreamQueryError(e: unknown): unknown {
  if (!(e instanceof DomainError) || e.code !== 'ValidationFailed') return e;
  const detail = e.details.find((d) => typeof d.field === 'string' && d.field.startsWith('$'));
  if (!detail?.field) return e;
  const coded = odataQueryErrorCodeOf(detail.message) ?? odataQueryErrorCodeOf(e.message);
  return new ODataQueryError(coded?.code ?? 'ValidationFailed', coded?.message ?? detail.message, detail.field);
}

/** A single-read request with the read's options, or without `query` when the client gave none. */
export function withQuery<R extends object>(
  request: R,
  query: ForwardedQueryOptions,
): R & { query?: ForwardedQueryOptions } {
  return Object.keys(query).length > 0 ? { ...request, query } : request;
}

/** Only the list envelope crosses to the client: `{ value }` plus `@odata.count` when the answer has one. */
export function listEnvelope<T>(answer: { value: T[]; '@odata.count'?: number }): {
  value: T[];
  '@odata.count'?: number;
} {
  const value = Array.isArray(answer?.value) ? answer.value : [];
  return typeof answer?.['@odata.count'] === 'number' ? { '@odata.count': answer['@odata.count'], value } : { value };
}

/** A uuid path parameter; anything else names no record (404). */
export function uuidParam(value: string, what: string): string {
  if (!isUuid(value)) throw new DomainError('NotFound', `No ${what} with id '${value.slice(0, 100)}'.`);
  return value.toLowerCase();
}

/** An optional int64 Unix-ms query parameter. */
export function timestampParam(query: QueryParams | undefined, name: string): number | null {
  const raw = query?.[name];
  if (raw === undefined || raw === '') return null;
  if (typeof raw !== 'string' || !/^\d{1,16}$/.test(raw))
    throw invalid(name, 'must be a Unix time in milliseconds (a non-negative integer)');
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw invalid(name, 'is out of range');
  return n;
}
