/**
 * Change notices: change records of records a service other than management-api owns, relayed
 * through their own JetStream stream to management-api (docs/management-messaging.md).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Int64, Nullable, StringEnum, Uuid } from '../interface-a/record-schema.js';
import { CHANGE_TYPES } from '../interface-b/records.js';
import { validator } from '../validation/validate.js';
import { STREAM_LIMITS } from './runtime.js';

/** JetStream stream of change notices, and the subject a record owner publishes on. */
export function changeStreamName(namespace: string): string {
  return `${namespace}-changes`;
}
export function changeSubject(namespace: string, owner: string): string {
  return `${namespace}.changes.${owner}`;
}

/** The change notice stream as whoever starts first creates it (durations in milliseconds). */
export function changeStreamSettings(namespace: string) {
  return { name: changeStreamName(namespace), subjects: [changeSubject(namespace, '>')], ...STREAM_LIMITS };
}

/** Durable consumer of the change notice stream (management-api). */
export const CHANGE_NOTICE_CONSUMER = 'management-api-changes';

/** The publisher subject of recording-service's notices. */
export const RECORDING_CHANGE_OWNER = 'recording-service';

/** One change record, as its owner announces it: the fields management-api stores, under the record's id. */
export const ChangeNotice = Type.Object(
  {
    /** The change record's id (also the Nats-Msg-Id): a notice is stored once, whatever its deliveries. */
    id: Uuid(),
    /** The organization the changed record belongs to (its change log shows the record). */
    organizationId: Type.String({ minLength: 1 }),
    type: StringEnum(CHANGE_TYPES),
    /** Type name of the entity set, e.g. `ChannelRecording`. */
    entityType: Type.String({ minLength: 1 }),
    entityId: Type.String({ minLength: 1 }),
    propertyName: Type.String({ minLength: 1 }),
    oldValue: Nullable(Type.String()),
    newValue: Nullable(Type.String()),
    /** Unix ms. */
    changedOn: Int64({ minimum: 0 }),
    changedBy: Type.String({ minLength: 1 }),
  },
  { $id: 'ChangeNotice', additionalProperties: false },
);
export type ChangeNotice = Static<typeof ChangeNotice>;
export const changeNotice = validator(ChangeNotice);
