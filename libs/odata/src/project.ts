/**
 * `$select` / `$expand` projection of loaded records (framework-free).
 */
import type { ExpandItem, SelectItem } from './ast.js';
import type { EntityModel, EntityRecord } from './model.js';

export interface ProjectionSpec {
  readonly select?: readonly SelectItem[];
  readonly expand: readonly ExpandItem[];
}

function isObject(v: unknown): v is EntityRecord {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function pick(target: EntityRecord, source: EntityRecord, path: readonly string[]): void {
  const [head, ...rest] = path;
  if (!Object.hasOwn(source, head!)) return;
  const value = source[head!];
  if (rest.length === 0) {
    target[head!] = value;
    return;
  }
  if (!isObject(value)) {
    // The complex value is null (or not an object): it is shown as such.
    if (!Object.hasOwn(target, head!)) target[head!] = value ?? null;
    return;
  }
  const existing = target[head!];
  const nested = isObject(existing) ? existing : {};
  target[head!] = nested;
  pick(nested, value, rest);
}

function navigationName(item: ExpandItem): string {
  return item.navigation?.name ?? item.path.join('/');
}

/**
 * Keeps the `$select`ed properties of a record (all when `$select` is absent or has `*`) plus the
 * expanded navigation properties (each projected with its nested `$select`/`$expand`) and their
 * `@odata.count`. With a model, navigation properties that are not expanded are dropped.
 */
export function projectRecord(record: EntityRecord, query: ProjectionSpec, model?: EntityModel): EntityRecord {
  const expanded = new Map<string, ExpandItem>();
  for (const item of query.expand) expanded.set(navigationName(item), item);
  const navNames = new Set(model?.navigations.map((n) => n.name) ?? []);
  const all = !query.select || query.select.some((s) => s.kind === 'star');
  let out: EntityRecord;
  if (all) {
    out = {};
    for (const [k, v] of Object.entries(record)) {
      if (navNames.has(k) && !expanded.has(k)) continue;
      if (k.endsWith('@odata.count') && !expanded.has(k.slice(0, -'@odata.count'.length))) continue;
      out[k] = v;
    }
  } else {
    out = {};
    for (const item of query.select!) {
      if (item.kind !== 'path') continue;
      if (item.path.length === 1 && navNames.has(item.path[0]!)) continue;
      pick(out, record, item.path);
    }
  }
  for (const [name, item] of expanded) {
    const value = record[name];
    const target = item.navigation?.target;
    const nested: ProjectionSpec = {
      ...(item.options.select ? { select: item.options.select } : {}),
      expand: item.options.expand,
    };
    if (Array.isArray(value)) out[name] = value.map((v) => (isObject(v) ? projectRecord(v, nested, target) : v));
    else if (isObject(value)) out[name] = projectRecord(value, nested, target);
    else out[name] = value ?? null;
    const countKey = `${name}@odata.count`;
    if (Object.hasOwn(record, countKey)) out[countKey] = record[countKey];
  }
  return out;
}
