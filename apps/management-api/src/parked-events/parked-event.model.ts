import { Type } from '@sinclair/typebox';
import { defineEntityModel } from '@switchboard/odata';
import type { EntitySetSpec } from '../common/record-reader.js';

/** Parked events: deployment-wide (no organization), operator only. */
export const parkedEventModel = defineEntityModel({
  name: 'ParkedEvent',
  key: 'id',
  table: 'management.parked_event',
  properties: [
    { name: 'id', kind: 'guid', nullable: false },
    { name: 'service', kind: 'string', nullable: false },
    { name: 'consumer', kind: 'string', nullable: false },
    { name: 'stream', kind: 'string', nullable: false },
    { name: 'streamSequence', kind: 'integer', column: 'stream_sequence', nullable: false },
    { name: 'subject', kind: 'string', nullable: false },
    { name: 'payload', kind: 'string', nullable: false },
    { name: 'payloadPreview', kind: 'string', column: 'payload_preview', nullable: false },
    { name: 'error', kind: 'string', nullable: false },
    { name: 'attempts', kind: 'integer', nullable: false },
    { name: 'status', kind: 'string', nullable: false },
    { name: 'replays', kind: 'integer', nullable: false },
    { name: 'parkedOn', kind: 'datetime-ms', column: 'parked_on', nullable: false },
    { name: 'replayedOn', kind: 'datetime-ms', column: 'replayed_on' },
    { name: 'createdOn', kind: 'datetime-ms', column: 'parked_on', nullable: false },
    { name: 'modifiedOn', kind: 'datetime-ms', column: 'modified_on', nullable: false },
  ],
});

export const PARKED_EVENTS: EntitySetSpec = {
  name: 'ParkedEvent',
  model: parkedEventModel,
  tenantColumn: null,
  defaultOrder: ['"e"."parked_on"'],
};

const Timestamp = (description: string) => Type.Integer({ description });

export const ParkedEvent = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    service: Type.String({ description: 'The service owning the consumer (replays go to it).' }),
    consumer: Type.String({ description: 'Durable consumer that parked the event.' }),
    stream: Type.String(),
    streamSequence: Type.Integer(),
    subject: Type.String(),
    payload: Type.String({ description: 'The message body, base64 (it may hold what JSON text cannot).' }),
    payloadPreview: Type.String({
      description:
        'The body as UTF-8 text, NUL shown as `\\u0000`, lone surrogates as U+FFFD, at most 2,000 characters.',
    }),
    error: Type.String({ description: 'Why it was parked, or why the last replay failed.' }),
    attempts: Type.Integer({ description: 'Deliveries of the event when it was parked.' }),
    status: Type.Union([Type.Literal('Parked'), Type.Literal('Replayed')]),
    replays: Type.Integer({ description: 'Replays tried.' }),
    parkedOn: Timestamp('When it was parked, Unix ms.'),
    replayedOn: Type.Union([Type.Integer(), Type.Null()], { description: 'When a replay went through, Unix ms.' }),
    createdOn: Timestamp('Same as parkedOn.'),
    modifiedOn: Timestamp('Last change (parked, replay tried), Unix ms.'),
  },
  {
    $id: 'ParkedEvent',
    description:
      'An event a durable consumer could not process within EVENT_MAX_ATTEMPTS deliveries, or could not read.',
  },
);

export const ParkedEventList = Type.Object(
  { value: Type.Array(ParkedEvent), '@odata.count': Type.Optional(Type.Integer()) },
  { $id: 'ParkedEventList' },
);
