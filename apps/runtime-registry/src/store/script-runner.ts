import type { Redis } from 'ioredis';

type ScriptCaller = (...keysAndArgs: Array<string | number>) => Promise<string>;

/** Calls a script that LiveStore defined on the client (`defineCommand`); answers its raw reply. */
export function callScript(redis: Redis, name: string, ...keysAndArgs: Array<string | number>): Promise<string> {
  const fn = (redis as unknown as Record<string, ScriptCaller>)[name];
  if (!fn) throw new Error(`script ${name} is not defined`);
  return fn.call(redis, ...keysAndArgs);
}

/** Runs a script of one key (and its arguments as JSON); answers its JSON answer, parsed. */
export async function runScript<T>(redis: Redis, name: string, key: string, args: unknown): Promise<T> {
  return JSON.parse(await callScript(redis, name, key, JSON.stringify(args))) as T;
}
