import { Column, Entity, PrimaryColumn } from 'typeorm';
import { int64 } from '@switchboard/persistence';

/** An event a durable consumer parked (see contracts `parked.ts`); operators list and replay it. */
@Entity({ name: 'parked_event' })
export class ParkedEventEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ type: 'text' })
  service!: string;

  @Column({ type: 'text' })
  consumer!: string;

  @Column({ type: 'text' })
  stream!: string;

  @Column({ name: 'stream_sequence', type: 'bigint', transformer: int64 })
  streamSequence!: number;

  @Column({ type: 'text' })
  subject!: string;

  /** The message body, base64. */
  @Column({ type: 'text' })
  payload!: string;

  /** The body decoded as UTF-8, NUL and lone surrogates escaped, cut at 2,000 characters. */
  @Column({ name: 'payload_preview', type: 'text' })
  payloadPreview!: string;

  @Column({ type: 'text' })
  error!: string;

  @Column({ type: 'integer' })
  attempts!: number;

  /** `Parked`, or `Replayed` once a replay went through. */
  @Column({ type: 'text' })
  status!: string;

  @Column({ type: 'integer' })
  replays!: number;

  @Column({ name: 'parked_on', type: 'bigint', transformer: int64 })
  parkedOn!: number;

  @Column({ name: 'replayed_on', type: 'bigint', nullable: true, transformer: int64 })
  replayedOn!: number | null;

  @Column({ name: 'modified_on', type: 'bigint', transformer: int64 })
  modifiedOn!: number;
}
