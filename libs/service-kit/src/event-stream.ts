import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type StreamConfig,
  type StreamInfo,
} from '@nats-io/jetstream';
import { millis, nanos } from '@nats-io/transport-node';
import {
  changeStreamSettings,
  eventStreamName,
  eventStreamSettings,
  parkedStreamSettings,
} from '@switchboard/contracts';

/** Limits of the domain event stream; defaults from the contract's `eventStreamSettings`. */
export interface EventStreamLimits {
  maxAgeMs: number;
  duplicateWindowMs: number;
  replicas: number;
}

/** A stream of ours in JetStream's terms: limits retention, file storage, durations in nanoseconds. */
function streamConfig(
  name: string,
  subjects: readonly string[],
  limits: EventStreamLimits,
): Partial<StreamConfig> & { name: string; subjects: string[] } {
  return {
    name,
    subjects: [...subjects],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_age: nanos(limits.maxAgeMs),
    duplicate_window: nanos(limits.duplicateWindowMs),
    num_replicas: limits.replicas,
  };
}

/** The domain event stream in JetStream's terms. */
export function eventStreamConfig(
  namespace: string,
  limits: EventStreamLimits = eventStreamSettings(namespace),
): Partial<StreamConfig> & { name: string; subjects: string[] } {
  const s = eventStreamSettings(namespace);
  return streamConfig(s.name, s.subjects, limits);
}

function isStreamNotFound(e: unknown): boolean {
  return e instanceof JetStreamApiError && e.code === JetStreamApiCodes.StreamNotFound;
}

export interface EnsureEventStreamOptions {
  /** Limits to create the stream with (default: the contract's). */
  limits?: EventStreamLimits;
  /**
   * The stream's owner (runtime-registry) brings an existing stream to `limits` and adds missing
   * subjects; consumers use an existing stream as it is, so a difference in limits never stops them.
   */
  enforce?: boolean;
}

/**
 * Makes sure the domain event stream exists: whoever starts first creates it, so no service waits
 * for another. Idempotent and race-safe: replicas creating it at the same moment all succeed.
 */
export async function ensureEventStream(
  jsm: JetStreamManager,
  namespace: string,
  options: EnsureEventStreamOptions = {},
): Promise<'created' | 'existing' | 'updated'> {
  const wanted = eventStreamConfig(namespace, options.limits);
  const { info, created } = await createOrInfo(jsm, wanted);
  if (created) return 'created';
  if (!options.enforce) return 'existing';
  const c = info!.config;
  const subjectsDiffer = wanted.subjects.some((s) => !(c.subjects ?? []).includes(s));
  if (c.max_age === wanted.max_age && c.duplicate_window === wanted.duplicate_window && !subjectsDiffer)
    return 'existing';
  await jsm.streams.update(wanted.name, {
    subjects: [...new Set([...(c.subjects ?? []), ...wanted.subjects])],
    max_age: wanted.max_age,
    duplicate_window: wanted.duplicate_window,
  });
  return 'updated';
}

/** A stream's info, or the stream created as `wanted` when missing (race-safe: another creator's stream is used). */
async function createOrInfo(
  jsm: JetStreamManager,
  wanted: Partial<StreamConfig> & { name: string },
): Promise<{ info?: StreamInfo; created: boolean }> {
  let info;
  try {
    info = await jsm.streams.info(wanted.name);
  } catch (e) {
    if (!isStreamNotFound(e)) throw e;
    try {
      await jsm.streams.add(wanted);
      return { created: true };
    } catch (addError) {
      // Another replica or service created it in between: use theirs.
      info = await jsm.streams.info(wanted.name).catch(() => {
        throw addError;
      });
    }
  }
  return { info, created: false };
}

/** The change notice stream (`changeStreamSettings`) in JetStream's terms. */
export function changeStreamConfig(namespace: string): Partial<StreamConfig> & { name: string; subjects: string[] } {
  const s = changeStreamSettings(namespace);
  return streamConfig(s.name, s.subjects, s);
}

/**
 * Makes sure the change notice stream exists (see contracts `changes.ts`): its publishers ensure
 * it before publishing and its consumer before attaching, so none waits for another. An existing
 * stream is used as it is. Idempotent and race-safe.
 */
export async function ensureChangeStream(jsm: JetStreamManager, namespace: string): Promise<'created' | 'existing'> {
  return (await createOrInfo(jsm, changeStreamConfig(namespace))).created ? 'created' : 'existing';
}

/**
 * Makes sure the parked event stream exists (contracts `parked.ts`): consumers ensure it before
 * parking, management-api before attaching. An existing stream gets the subjects it lacks (an
 * advisory subject added later). Idempotent and race-safe.
 */
export async function ensureParkedStream(
  jsm: JetStreamManager,
  namespace: string,
): Promise<'created' | 'existing' | 'updated'> {
  const s = parkedStreamSettings(namespace);
  const { info, created } = await createOrInfo(jsm, streamConfig(s.name, s.subjects, s));
  if (created) return 'created';
  const subjects = info!.config.subjects ?? [];
  if (s.subjects.every((x) => subjects.includes(x))) return 'existing';
  await jsm.streams.update(s.name, { subjects: [...new Set([...subjects, ...s.subjects])] });
  return 'updated';
}

/**
 * How long JetStream may still deliver an event of the live stream, in ms: its max age, never less
 * than the contract's (or `floorMs`). A consumer's idempotency records (processed event ids) older
 * than this may be forgotten. Null when nothing may be forgotten: the stream keeps events forever
 * (max age 0) or its configuration cannot be read now.
 */
export async function eventRedeliveryHorizonMs(
  jsm: JetStreamManager,
  namespace: string,
  floorMs = 0,
): Promise<number | null> {
  let live: number;
  try {
    live = millis((await jsm.streams.info(eventStreamName(namespace))).config.max_age);
  } catch {
    return null;
  }
  return live > 0 ? Math.max(floorMs, eventStreamSettings(namespace).maxAgeMs, live) : null;
}
