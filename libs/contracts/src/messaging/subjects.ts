/**
 * NATS subject catalog. Requests are `<service>.v1.<resource>.<verb>`, answered by one replica of
 * the owning service (queue group = service name); events are past tense. Every subject is
 * prefixed at run time with the deployment namespace (`NATS_NAMESPACE`), e.g. `sb.runtime-registry...`.
 * The maps below tie each subject to its payload and response, so a sender and its handler cannot
 * disagree.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { ApplicationSnapshot } from '../interface-a/index.js';
import type { RuntimeRequestMap } from './runtime.js';

/** Who is calling, as established by the gateway or the management API. */
export const CallerScope = Type.Object(
  {
    /** Organization of the credential; `null` for an operator token that belongs to none. */
    organizationId: Type.Union([Type.String(), Type.Null()]),
    /** Operators see every organization's runtime. */
    operator: Type.Boolean(),
    /** API key id or token subject, for audit. */
    principal: Type.String(),
  },
  { $id: 'CallerScope', additionalProperties: false },
);
export type CallerScope = Static<typeof CallerScope>;

const Id = Type.String({ minLength: 1, maxLength: 256 });

export const ApplicationsListRequest = Type.Object({ scope: CallerScope }, { additionalProperties: false });
export const ApplicationGetRequest = Type.Object({ scope: CallerScope, applicationId: Id }, { additionalProperties: false });
export const ApplicationRegisterRequest = Type.Object({ applicationId: Id, organizationId: Id }, { additionalProperties: false });

export const Subjects = {
  apiKeyVerify: 'management-api.v1.api-keys.verify',
  applicationsList: 'runtime-registry.v1.applications.list',
  applicationGet: 'runtime-registry.v1.applications.get',
  applicationRegister: 'runtime-registry.v1.applications.register',
} as const;

export type SubjectName = (typeof Subjects)[keyof typeof Subjects];

export interface RequestMap extends RuntimeRequestMap {
  'management-api.v1.api-keys.verify': {
    request: { apiKey: string };
    response: { valid: false } | { valid: true; keyId: string; organizationId: string; operator: boolean };
  };
  'runtime-registry.v1.applications.list': {
    request: { scope: CallerScope };
    response: string[];
  };
  'runtime-registry.v1.applications.get': {
    request: { scope: CallerScope; applicationId: string };
    response: ApplicationSnapshot;
  };
  'runtime-registry.v1.applications.register': {
    request: { applicationId: string; organizationId: string };
    response: { applicationId: string; organizationId: string };
  };
}

export type RequestOf<S extends keyof RequestMap> = RequestMap[S]['request'];
export type ResponseOf<S extends keyof RequestMap> = RequestMap[S]['response'];

/** Subject with the deployment namespace in front. */
export function namespaced(namespace: string, subject: string): string {
  return `${namespace}.${subject}`;
}
