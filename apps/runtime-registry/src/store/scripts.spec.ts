import {
  APP_SCRIPT_SERVER_KEY,
  APP_SCRIPTS,
  luaSource,
  scriptDefinitions,
  SEQUENCE_SCRIPTS,
  type AppScript,
} from './scripts.js';

describe('scriptDefinitions', () => {
  const defs = scriptDefinitions();

  it('every app script that closes connections gets the servers base key, so their media server counts move in the same script', () => {
    const closing = (Object.keys(APP_SCRIPTS) as AppScript[]).filter((name) =>
      /\b(close_connection|leave_channel)\s*\(/.test(luaSource(APP_SCRIPTS[name].file)),
    );
    expect(closing.sort()).toEqual(['rtConnState', 'rtRegister', 'rtRemoveMembers', 'rtUnregister']);
    for (const name of closing) {
      // Register's second key is its gateway's client set, whose prefix is the servers base key.
      const second = name === 'rtRegister' ? 'gateway' : 'media';
      expect({ name, keys: defs[name]!.numberOfKeys, second: APP_SCRIPT_SERVER_KEY[name] }).toEqual({
        name,
        keys: 3,
        second,
      });
      expect(luaSource(APP_SCRIPTS[name].file)).toMatch(/\bservers_key\b/);
    }
  });

  it('no script calls a helper above its definition (Lua would read it as an undefined global)', () => {
    for (const [name, def] of Object.entries(defs)) {
      const lines = def.lua.split('\n');
      for (const [at, line] of lines.entries()) {
        const fn = /^local function (\w+)/.exec(line)?.[1];
        if (!fn) continue;
        const call = new RegExp(`\\b${fn}\\s*\\(`);
        const early = lines.slice(0, at).findIndex((l) => !l.trimStart().startsWith('--') && call.test(l));
        expect({ name, fn, calledAt: early }).toEqual({ name, fn, calledAt: -1 });
      }
    }
  });

  it('rtSequence dispatches exactly the sequence scripts, to the functions their files define', () => {
    const table = /local sequence_scripts = \{([^}]*)\}/.exec(luaSource('sequence'))?.[1] ?? '';
    const entries = [...table.matchAll(/(\w+) = (\w+)/g)].map(([, script, run]) => [script, run]);
    expect(entries).toEqual(SEQUENCE_SCRIPTS.map((name) => [name, APP_SCRIPTS[name].run]));
  });
});
