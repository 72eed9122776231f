import { readFileSync } from 'node:fs';

// The Lua scripts of the live model live in ./lua (the build copies them to dist/). What each one
// guarantees, and how the preludes and rtSequence fit together: the store section of the README.

/** A script as ioredis `defineCommand` takes it. */
export interface ScriptDef {
  /** Absent: the caller passes the number of keys first (a script with a variable number of keys). */
  numberOfKeys?: number;
  lua: string;
}

interface AppScriptSource {
  /** The file in ./lua, without `.lua`. */
  file: string;
  /** The Lua function the file defines: `function(args, second_key)`, answering a table. */
  run: string;
}

/** The application scripts (KEYS[1] the application's base key, the last of KEYS the journal). */
export const APP_SCRIPTS = {
  rtRegister: { file: 'register', run: 'register_client' },
  rtUnregister: { file: 'unregister', run: 'unregister_client' },
  rtJoin: { file: 'join', run: 'join_channel' },
  rtRemoveMembers: { file: 'remove-members', run: 'remove_members' },
  rtOpen: { file: 'open', run: 'open_connection' },
  rtConnState: { file: 'connection-state', run: 'change_connection_state' },
  rtConnPatch: { file: 'connection-patch', run: 'patch_connection' },
  rtClientPatch: { file: 'client-patch', run: 'patch_client' },
  rtLevelUpdate: { file: 'level-update', run: 'update_level' },
  rtAppSnapshot: { file: 'app-snapshot', run: 'read_app_snapshot' },
  rtSessions: { file: 'sessions', run: 'read_sessions' },
} as const satisfies Record<string, AppScriptSource>;

/** The servers scripts (KEYS[1] the servers base key) and the applications index's, by file. */
const SINGLE_KEY_SCRIPTS = {
  rtIndexApply: 'index-apply',
  rtHeartbeat: 'heartbeat',
  rtPlace: 'place',
  rtSetActive: 'set-active',
  rtExpireServers: 'expire-servers',
} as const;

export type AppScript = keyof typeof APP_SCRIPTS;

/**
 * App scripts that get a second key of the servers slot: register the gateway's client set; every
 * script that opens or closes connections the servers base key, for the media server counts.
 */
export const APP_SCRIPT_SERVER_KEY: Partial<Record<AppScript, 'gateway' | 'media'>> = {
  rtRegister: 'gateway',
  rtUnregister: 'media',
  rtRemoveMembers: 'media',
  rtOpen: 'media',
  rtConnState: 'media',
};

/** The app scripts that `rtSequence` can run one after the other (its table in lua/sequence.lua). */
export const SEQUENCE_SCRIPTS = [
  'rtRegister',
  'rtJoin',
  'rtOpen',
  'rtConnState',
] as const satisfies readonly AppScript[];
export type SequenceScript = (typeof SEQUENCE_SCRIPTS)[number];

/** The text of one file of ./lua. */
export function luaSource(file: string): string {
  return readFileSync(new URL(`./lua/${file}.lua`, import.meta.url), 'utf8');
}

/** Every script with its full source (preludes included), ready for `defineCommand`. */
export function scriptDefinitions(): Record<string, ScriptDef> {
  const prelude = luaSource('prelude');
  const appPrelude = `${prelude}\n${luaSource('application')}`;
  const definitions: Record<string, ScriptDef> = {};
  for (const [name, file] of Object.entries(SINGLE_KEY_SCRIPTS))
    definitions[name] = { numberOfKeys: 1, lua: `${prelude}\n${luaSource(file)}` };
  for (const name of Object.keys(APP_SCRIPTS) as AppScript[]) {
    const { file, run } = APP_SCRIPTS[name];
    const second = APP_SCRIPT_SERVER_KEY[name];
    const lua = `${appPrelude}\n${luaSource(file)}\nreturn run_alone(${run}, ${second ? 'KEYS[2]' : 'nil'})\n`;
    // KEYS: the application's base key, its second key if it has one, the journal.
    definitions[name] = { numberOfKeys: second ? 3 : 2, lua };
  }
  const sequenced = SEQUENCE_SCRIPTS.map((name) => luaSource(APP_SCRIPTS[name].file));
  definitions.rtSequence = { lua: [appPrelude, ...sequenced, luaSource('sequence')].join('\n') };
  return definitions;
}
