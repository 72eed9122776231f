import type { DomainError, EdgeReport, EffectiveSettings } from '@switchboard/contracts';

/** The settings of a connection the registry answered none for. */
export const NO_SETTINGS: EffectiveSettings = {
  recording: false,
  recordingTag: null,
  audioMuted: false,
  videoMuted: false,
  audioUnmuteDisabled: false,
  videoUnmuteDisabled: false,
};

/** What the registry answered to a report (fields absent when it answered less). */
export type Answer = Record<string, unknown>;

/**
 * One request, prepared: the edge's checks passed and its change of the edge state is applied in
 * advance, so the requests queued after it are checked against the state they would see if it
 * had been answered already (requests of a socket are handled as if one after the other).
 */
export interface Step {
  /** Reported to runtime-registry; absent: answered by the edge alone. */
  report?: EdgeReport;
  /** Once the registry accepted the report (or at once): the result data. May throw (an error frame). */
  finish(answer: Answer): unknown;
  /** Reverts the change applied in advance: the registry refused this report or one before it. */
  undo?(): void;
  /**
   * The error frame for the registry's refusal of this report, when the request names its own (else the registry's).
   */
  refused?(error: DomainError): DomainError | undefined;
}

/** Returned by `prepare` when the request depends on an answer still awaited: prepare it again after. */
export const AWAIT_ANSWERS = Symbol('await-answers');
