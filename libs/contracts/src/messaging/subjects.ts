/**
 * NATS subject catalog. Requests are `<service>.v1.<resource>.<verb>`, answered by one replica of
 * the owning service (queue group = service name); events are past tense. Every subject is
 * prefixed at run time with the deployment namespace (`NATS_NAMESPACE`), e.g. `sb.runtime-registry...`.
 * The maps below tie each subject to its payload and response, so a sender and its handler cannot
 * disagree.
 */
import { Type, type Static } from '@sinclair/typebox';
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

/**
 * Request subjects outside the runtime contract. The runtime-registry subjects (query, command,
 * edge, heartbeat) are in `RuntimeSubjects` (runtime.ts); an application is in use while a client
 * of it is registered through the edge (`client.register`), there is no separate registration.
 */
export const Subjects = {
  apiKeyVerify: 'management-api.v1.api-keys.verify',
  organizationStatus: 'management-api.v1.organizations.status',
} as const;

export interface RequestMap extends RuntimeRequestMap {
  'management-api.v1.api-keys.verify': {
    request: { apiKey: string };
    /** `organizationDisabled`: the key exists but its organization is disabled (refused with 403). */
    response:
      | { valid: false; organizationDisabled?: true; organizationId?: string }
      | { valid: true; keyId: string; organizationId: string; operator: boolean };
  };
  /** Whether the organization a Bearer token names is disabled (the gateway refuses it with 403). */
  'management-api.v1.organizations.status': {
    request: { organizationId: string };
    response: { disabled: boolean };
  };
}

export type RequestOf<S extends keyof RequestMap> = RequestMap[S]['request'];
export type ResponseOf<S extends keyof RequestMap> = RequestMap[S]['response'];

/** Subject with the deployment namespace in front. */
export function namespaced(namespace: string, subject: string): string {
  return `${namespace}.${subject}`;
}
