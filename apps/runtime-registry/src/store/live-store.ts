import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { ClientRef } from '@switchboard/contracts';
import { REDIS } from '@switchboard/service-kit';
import type { Redis } from 'ioredis';
import { asList } from '../model/records.js';
import * as clientWrites from './client-writes.js';
import * as connectionWrites from './connection-writes.js';
import { clientMember, gatewayMember, KEY_PREFIX, parseGatewayMember, RegistryKeys } from './keys.js';
import { sessionSnapshot, type RawSession } from './script-answers.js';
import { callScript, runScript } from './script-runner.js';
import { scriptDefinitions, SEQUENCE_SCRIPTS, type AppScript, type SequenceScript } from './scripts.js';
import type {
  CallOutcome,
  ClientIds,
  IndexTransition,
  JournalEntry,
  ScriptCall,
  SessionSnapshot,
} from './store-types.js';

export type * from './store-types.js';

/** The parameters of a script call builder after its keys (the store passes its own). */
type AfterKeys<F> = F extends (keys: RegistryKeys, ...rest: infer R) => unknown ? R : never;

/**
 * The live model of the applications in Redis: every change is one Lua script (see scripts.ts),
 * reads are MULTI pipelines. Script failures become NotFound, Conflict or Forbidden DomainErrors.
 */
@Injectable()
export class LiveStore implements OnModuleInit {
  readonly keys: RegistryKeys;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(KEY_PREFIX) prefix: string,
  ) {
    this.keys = new RegistryKeys(prefix);
  }

  onModuleInit() {
    for (const [name, def] of Object.entries(scriptDefinitions())) {
      if (!(name in this.redis)) this.redis.defineCommand(name, def);
    }
  }

  /**
   * Runs an app script: KEYS are its keys and the journal, ARGV its arguments as JSON and, with
   * `journal`, the entry's id and context (recorded with its change). Answers the script's JSON text.
   */
  private runApp(
    script: AppScript | 'rtSequence',
    keys: readonly string[],
    args: unknown,
    journal?: JournalEntry,
    variableKeys = false,
  ): Promise<string> {
    const all = [...keys, this.keys.journal(), JSON.stringify(args)];
    if (journal) all.push(journal.id, journal.context);
    // A script with a variable number of keys (rtSequence) takes their number first.
    return variableKeys
      ? callScript(this.redis, script, keys.length + 1, ...all)
      : callScript(this.redis, script, ...all);
  }

  /** Runs one described script call (see `ScriptCall`); with `journal`, journaled with its change. */
  async call<T>(scriptCall: ScriptCall<T>, journal?: JournalEntry): Promise<T> {
    const { script, keys, args } = scriptCall;
    return scriptCall.result(JSON.parse(await this.runApp(script, keys, args, journal)));
  }

  /**
   * Runs script calls of ONE application one after the other as one script (`rtSequence`), all
   * atomically. The first that fails ends it: answers the outcomes of the calls that ran (the failing
   * one last); the calls after it were not applied.
   */
  async sequence(
    calls: ReadonlyArray<ScriptCall<unknown>>,
    journal?: JournalEntry,
  ): Promise<Array<CallOutcome<unknown>>> {
    if (calls.length === 0) return [];
    const keys: string[] = [calls[0]!.keys[0]];
    const ops = calls.map((call) => {
      if (call.keys[0] !== keys[0]) throw new Error('a script sequence runs against one application');
      if (!(SEQUENCE_SCRIPTS as readonly string[]).includes(call.script))
        throw new Error(`${call.script} does not run in a sequence`);
      const second = call.keys[1];
      let keyIndex = second === undefined ? 0 : keys.indexOf(second);
      if (keyIndex < 0) keyIndex = keys.push(second!) - 1;
      return { s: call.script as SequenceScript, p: call.args, k: keyIndex + 1 };
    });
    return this.sequenceOutcomes(calls, await this.runApp('rtSequence', keys, { ops }, journal, true));
  }

  /** The outcomes of a `sequence` from its script's answer (also read from a journal entry). */
  sequenceOutcomes(calls: ReadonlyArray<ScriptCall<unknown>>, answer: string): Array<CallOutcome<unknown>> {
    const raw = asList<unknown>(JSON.parse(answer));
    const out: Array<CallOutcome<unknown>> = [];
    let client: unknown;
    for (let i = 0; i < raw.length && i < calls.length; i++) {
      // `client: 1`: the client hash of the answer before (see rtSequence).
      const answer = raw[i] as { client?: unknown };
      if (answer && typeof answer === 'object' && answer.client !== undefined) {
        if (answer.client === 1) answer.client = client;
        else client = answer.client;
      }
      try {
        out.push({ ok: calls[i]!.result(answer) });
      } catch (error) {
        out.push({ error });
        break;
      }
    }
    return out;
  }

  // Writes, described as script calls: run them with `call`, or several in a `sequence`.

  /** Registers a client (and adds it to its gateway's client set). */
  registerCall(...args: AfterKeys<typeof clientWrites.registerCall>) {
    return clientWrites.registerCall(this.keys, ...args);
  }

  /** Unregisters a client; null when it was not registered (or is held by another registration). */
  unregisterCall(...args: AfterKeys<typeof clientWrites.unregisterCall>) {
    return clientWrites.unregisterCall(this.keys, ...args);
  }

  joinCall(...args: AfterKeys<typeof clientWrites.joinCall>) {
    return clientWrites.joinCall(this.keys, ...args);
  }

  /** Removes members of a channel (kicks, a leave). */
  removeMembersCall(...args: AfterKeys<typeof clientWrites.removeMembersCall>) {
    return clientWrites.removeMembersCall(this.keys, ...args);
  }

  /** Opens a connection (placed on a media server for sfu/mcu). */
  openCall(...args: AfterKeys<typeof connectionWrites.openCall>) {
    return connectionWrites.openCall(this.keys, ...args);
  }

  connStateCall(...args: AfterKeys<typeof connectionWrites.connStateCall>) {
    return connectionWrites.connStateCall(this.keys, ...args);
  }

  levelUpdateCall(...args: AfterKeys<typeof connectionWrites.levelUpdateCall>) {
    return connectionWrites.levelUpdateCall(this.keys, ...args);
  }

  /** Writes fields of a connection record (see `connPatchCall` for the unmute guard). */
  connPatch(...args: AfterKeys<typeof connectionWrites.connPatchCall>) {
    return this.call(connectionWrites.connPatchCall(this.keys, ...args));
  }

  clientPatch(...args: AfterKeys<typeof clientWrites.clientPatchCall>) {
    return this.call(clientWrites.clientPatchCall(this.keys, ...args));
  }

  /** Applies an in-use transition to the applications index (ordered by generation). */
  async indexApply(applicationId: string, transition: IndexTransition): Promise<void> {
    const { gen, state, org } = transition;
    await runScript(this.redis, 'rtIndexApply', this.keys.appsIndex(), { a: applicationId, gen, state, org });
  }

  // Reads

  /** Runs read commands in one MULTI (a consistent snapshot). */
  async read(commands: Array<[string, ...Array<string | number>]>): Promise<unknown[]> {
    if (commands.length === 0) return [];
    const results = (await this.redis.multi(commands as unknown as string[][]).exec()) ?? [];
    return results.map(([err, value]) => {
      if (err) throw err;
      return value;
    });
  }

  /**
   * What the registry holds for these clients of an application, in one atomic read (rtSessions):
   * one per client, null when not registered; and the application's settings sequence number.
   */
  async sessions(
    applicationId: string,
    clients: ClientIds[],
  ): Promise<{ clients: Array<SessionSnapshot | null>; seq: number }> {
    const members = clients.map((client) => clientMember(client.userId, client.deviceId, client.clientId));
    const answer = JSON.parse(await this.runApp('rtSessions', [this.keys.app(applicationId)], { cls: members })) as {
      clients: unknown;
      seq: string;
    };
    return {
      seq: Number(answer.seq) || 0,
      clients: asList<RawSession>(answer.clients).map((raw) => (raw ? sessionSnapshot(raw) : null)),
    };
  }

  /** Owner, in-use flag and counts of an application, in one atomic read. */
  async appSnapshot(
    applicationId: string,
  ): Promise<{ organizationId: string | null; inUse: boolean; counts: number[] }> {
    const answer = JSON.parse(await this.runApp('rtAppSnapshot', [this.keys.app(applicationId)], {})) as {
      org: string | false;
      inUse: boolean;
      counts: number[];
    };
    return { organizationId: answer.org || null, inUse: answer.inUse, counts: asList<number>(answer.counts) };
  }

  /** The Redis clock (ms), the clock the scripts stamp changes and heartbeats with. */
  async now(): Promise<number> {
    const [seconds, microseconds] = await this.redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(microseconds) / 1000);
  }

  /** The owner and in-use flag of an application. */
  async appOwner(applicationId: string): Promise<{ organizationId: string | null; inUse: boolean }> {
    const [org, inUse] = await this.redis.hmget(this.keys.app(applicationId), 'organizationId', 'inUse');
    return { organizationId: org ?? null, inUse: inUse === '1' };
  }

  async appsIndex(): Promise<Map<string, { gen: number; inUse: boolean; organizationId: string }>> {
    const all = await this.redis.hgetall(this.keys.appsIndex());
    const out = new Map<string, { gen: number; inUse: boolean; organizationId: string }>();
    for (const [applicationId, entry] of Object.entries(all)) {
      const match = /^(\d+):([01]):(.*)$/.exec(entry);
      if (match) out.set(applicationId, { gen: Number(match[1]), inUse: match[2] === '1', organizationId: match[3]! });
    }
    return out;
  }

  // The gateways' client sets (servers slot): the register script adds, the caller removes.

  gatewayMember(applicationId: string, client: ClientIds): string {
    return gatewayMember(applicationId, client);
  }

  parseGatewayMember(member: string): ClientRef {
    return parseGatewayMember(member);
  }

  /** After a register (which added the client to its gateway's set): leaves the previous gateway's set. */
  async untrackPreviousGateway(
    applicationId: string,
    client: ClientIds,
    gatewayId: string,
    previous: string | null,
  ): Promise<void> {
    if (previous && previous !== gatewayId)
      await this.redis.srem(this.keys.gatewayClients(previous), gatewayMember(applicationId, client));
  }

  async untrackGateway(applicationId: string, client: ClientIds, gatewayId: string | null): Promise<void> {
    if (gatewayId) await this.redis.srem(this.keys.gatewayClients(gatewayId), gatewayMember(applicationId, client));
  }
}
