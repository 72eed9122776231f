/**
 * Service configuration: every setting is declared once, with its environment variable, type,
 * default and description. Only this module reads the environment. A bad value stops the
 * service with a message naming the setting; sensitive values are never echoed.
 */
export interface Setting<T> {
  readonly env: string;
  readonly description: string;
  readonly kind: string;
  readonly required: boolean;
  readonly sensitive: boolean;
  readonly defaultValue: T | undefined;
  /** Default as documented (README, manifests); `undefined` when required or empty. */
  readonly documentedDefault: string | undefined;
  parse(raw: string): T;
}

export type Settings = Record<string, Setting<unknown>>;
export type ConfigOf<S extends Settings> = { readonly [K in keyof S]: S[K] extends Setting<infer T> ? T : never };

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly setting: string,
    reason: string,
  ) {
    super(`Invalid configuration: ${setting} ${reason}`);
  }
}

interface Options<T> {
  env: string;
  description: string;
  default?: T;
  /** A setting without default is required unless `optional` is set (then it is `undefined`). */
  optional?: boolean;
  sensitive?: boolean;
}

function setting<T>(
  kind: string,
  o: Options<T>,
  parse: (raw: string) => T,
  show: (v: T) => string = String,
): Setting<T> {
  return {
    env: o.env,
    description: o.description,
    kind,
    required: o.default === undefined && !o.optional,
    sensitive: o.sensitive ?? false,
    defaultValue: o.default,
    documentedDefault: o.default === undefined ? undefined : show(o.default),
    parse,
  };
}

export function str(o: Options<string> & { pattern?: RegExp; minLength?: number }): Setting<string> {
  return setting('string', o, (raw) => {
    if (o.minLength !== undefined && raw.length < o.minLength)
      throw new Error(`must be at least ${o.minLength} characters`);
    if (o.pattern && !o.pattern.test(raw)) throw new Error(`must match ${String(o.pattern)}`);
    return raw;
  });
}

export function int(o: Options<number> & { min?: number; max?: number }): Setting<number> {
  return setting('integer', o, (raw) => {
    if (!/^-?\d+$/.test(raw.trim())) throw new Error('must be an integer');
    const n = Number(raw);
    if (o.min !== undefined && n < o.min) throw new Error(`must be at least ${o.min}`);
    if (o.max !== undefined && n > o.max) throw new Error(`must be at most ${o.max}`);
    return n;
  });
}

export function bool(o: Options<boolean>): Setting<boolean> {
  return setting('boolean', o, (raw) => {
    const v = raw.trim().toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(v)) return true;
    if (['false', '0', 'no', 'off'].includes(v)) return false;
    throw new Error('must be true or false');
  });
}

export function oneOf<const V extends string>(values: readonly V[], o: Options<V>): Setting<V> {
  return setting(values.join('|'), o, (raw) => {
    if (!(values as readonly string[]).includes(raw)) throw new Error(`must be one of ${values.join(', ')}`);
    return raw as V;
  });
}

export function url(o: Options<string> & { protocols: readonly string[] }): Setting<string> {
  return setting(`url (${o.protocols.join(', ')})`, o, (raw) => {
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new Error('must be a URL');
    }
    if (!o.protocols.includes(parsed.protocol.replace(/:$/, '')))
      throw new Error(`must use ${o.protocols.join(' or ')}`);
    return raw;
  });
}

/** Comma-separated list; each item checked by `item`. */
export function list(
  o: Options<readonly string[]> & { item?: (v: string) => string | undefined },
): Setting<readonly string[]> {
  return setting(
    'list',
    o,
    (raw) => {
      const items = raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      for (const i of items) {
        const problem = o.item?.(i);
        if (problem) throw new Error(`item "${i}" ${problem}`);
      }
      return items;
    },
    (v) => v.join(','),
  );
}

/** Reads and validates every setting; throws ConfigError naming the first bad setting. */
/** What the deployment templates put where the operator must set a value (k8s/secrets.yaml, k8s/config.yaml). */
export const PLACEHOLDER = 'REPLACE_ME';

export function loadConfig<S extends Settings>(
  settings: S,
  env: Record<string, string | undefined> = process.env,
): ConfigOf<S> {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(settings)) {
    const raw = env[s.env];
    if (raw === undefined || raw === '') {
      if (s.required) throw new ConfigError(s.env, `is required: ${s.description}`);
      out[key] = s.defaultValue;
      continue;
    }
    // The deployment templates (k8s/) mark what the operator must fill in with REPLACE_ME; a value
    // still holding one would pass most checks (a 40-character placeholder is a valid HMAC key,
    // and a publicly known one).
    if (raw.includes(PLACEHOLDER))
      throw new ConfigError(
        s.env,
        `still holds a template placeholder (${PLACEHOLDER}...): set the real value, or leave it unset when it is not used`,
      );
    try {
      out[key] = s.parse(raw);
    } catch (e) {
      const shown = s.sensitive ? '' : ` (got "${raw.length > 80 ? `${raw.slice(0, 80)}...` : raw}")`;
      throw new ConfigError(s.env, `${(e as Error).message}${shown}`);
    }
  }
  return out as ConfigOf<S>;
}
