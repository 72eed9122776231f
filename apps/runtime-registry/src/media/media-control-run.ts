/**
 * Carries out a group of domain events on the media-agents: intents, current mutes, grouped commands
 * per server (mutes, then recording starts and stops, then ends, then destroys), retries of transient agent errors.
 */
import type { MediaAgentCommand } from '@switchboard/contracts';
import { isGone, isTransient, type MediaAgents } from './media-control-agent.js';
import type { MediaDomainEvent } from './media-control-context.js';
import {
  mediaIntent,
  planCommands,
  planRecords,
  recordIntent,
  type MediaIntent,
  type MuteIntent,
  type PlannedCommand,
  type RecordIntent,
} from './media-control-plan.js';

/** Tries of one command within one delivery, and the pauses between them. */
const RETRY_PAUSES_MS = [100, 400];

/** The registry's reads the media control needs (LiveReads behind MediaControlReads). */
export interface MediaControlReads {
  /** The effective mutes of these connections now; null for one gone or moved to another server. */
  currentMutes(intents: MuteIntent[]): Promise<Array<{ audioMuted: boolean; videoMuted: boolean } | null>>;
  /** The effective `recording` of these connections now; null for one gone or moved to another server. */
  currentRecording(intents: RecordIntent[]): Promise<Array<boolean | null>>;
  channelActive(applicationId: string, channelId: string): Promise<boolean>;
}

export interface GroupOutcome {
  /** Events (indexes in the group) whose commands all succeeded, or that asked for none. */
  done: number[];
  /** Events with a command that failed, and the first error. */
  failed: number[];
  error?: unknown;
  /** Per command sent: its kind and how long after its oldest event's timestamp it was answered. */
  sent: Array<{ kind: MediaAgentCommand['kind']; delayMs: number }>;
}

interface GroupInHand {
  events: ReadonlyArray<MediaDomainEvent>;
  outcome: GroupOutcome;
  failed: Set<number>;
  keepAlive: () => void;
}

export class MediaControlRun {
  constructor(
    private readonly agents: MediaAgents,
    private readonly reads: MediaControlReads,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  /** `keepAlive`: called before every command sent (the events in hand are still being worked on). */
  async run(events: ReadonlyArray<MediaDomainEvent>, keepAlive: () => void = () => undefined): Promise<GroupOutcome> {
    const intents = events.map(mediaIntent);
    const records = events.map(recordIntent);
    const outcome: GroupOutcome = { done: [], failed: [], sent: [] };
    if (intents.every((i) => i === null) && records.every((i) => i === null)) {
      outcome.done = events.map((_, i) => i);
      return outcome;
    }
    const janus = await this.agents.janusServers();
    const plan = planCommands(await this.withCurrentMutes(intents), janus);
    const recordCommands = planRecords(await this.withCurrentRecording(records), janus);
    const failed = new Set<number>();
    const byServer = new Map<string, PlannedCommand[][]>();
    for (const [phase, commands] of [plan.mute, recordCommands, plan.end, plan.destroy].entries()) {
      for (const c of commands) {
        const phases = byServer.get(c.mediaServerId) ?? [[], [], [], []];
        phases[phase]!.push(c);
        byServer.set(c.mediaServerId, phases);
      }
    }
    await Promise.all(
      [...byServer.values()].map(async (phases) => {
        for (const commands of phases) {
          await Promise.all(commands.map((c) => this.carryOut(c, { events, outcome, failed, keepAlive })));
        }
      }),
    );
    events.forEach((_, i) => (failed.has(i) ? outcome.failed : outcome.done).push(i));
    return outcome;
  }

  /** Mutes as the settings say now (a redelivered old event must not undo a later change). */
  private async withCurrentMutes(intents: Array<MediaIntent | null>): Promise<Array<MediaIntent | null>> {
    const mutes = intents.filter((i): i is MuteIntent => i?.act === 'mute');
    if (mutes.length === 0) return intents;
    const current = await this.reads.currentMutes(mutes);
    const now = new Map(mutes.map((m, k) => [m, current[k] ?? null]));
    return intents.map((intent) => {
      if (intent?.act !== 'mute') return intent;
      const flags = now.get(intent);
      return flags ? { ...intent, ...flags } : null;
    });
  }

  /** Recording as the settings say now, like the mutes. */
  private async withCurrentRecording(intents: Array<RecordIntent | null>): Promise<Array<RecordIntent | null>> {
    const asked = intents.filter((i): i is RecordIntent => i !== null);
    if (asked.length === 0) return intents;
    const current = await this.reads.currentRecording(asked);
    const now = new Map(asked.map((intent, k) => [intent, current[k] ?? null]));
    return intents.map((intent) => {
      const recording = intent ? now.get(intent) : null;
      return intent && typeof recording === 'boolean' ? { ...intent, recording } : null;
    });
  }

  private async carryOut(planned: PlannedCommand, group: GroupInHand): Promise<void> {
    const { events, outcome, failed, keepAlive } = group;
    const { command } = planned;
    try {
      // A channel active again (someone joined since) keeps its room; reconciliation sees to the rest.
      if (planned.destroysChannel && 'channelId' in command) {
        if (await this.reads.channelActive(command.applicationId, command.channelId)) return;
      }
      await this.send(planned.mediaServerId, command, keepAlive);
      const oldest = Math.min(...planned.sources.map((i) => events[i]!.event.timestamp));
      outcome.sent.push({ kind: command.kind, delayMs: Date.now() - oldest });
    } catch (e) {
      outcome.error ??= e;
      for (const i of planned.sources) failed.add(i);
    }
  }

  /** Sends a command; NotFound is success (gone already), transient errors are tried again. */
  private async send(mediaServerId: string, command: MediaAgentCommand, keepAlive: () => void): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        keepAlive();
        await this.agents.send(mediaServerId, command);
        return;
      } catch (e) {
        if (isGone(e)) return;
        const pause = RETRY_PAUSES_MS[attempt];
        if (!isTransient(e) || pause === undefined) throw e;
        await this.sleep(pause);
      }
    }
  }
}
