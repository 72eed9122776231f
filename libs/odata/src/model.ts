/**
 * Entity models: the per-entity whitelist the query engine validates against and translates with.
 * Everything here is developer-written configuration (trusted); user input never reaches a column
 * name or SQL expression defined in a model.
 */

/**
 * Property kinds:
 * - `string`: text; `number`: JSON number (evaluated as IEEE double); `integer`: int64 (int32 fits);
 * - `boolean`; `guid`: a `uuid` column; `datetime-ms`: an int64 Unix-epoch-milliseconds timestamp
 *   (the contract's `createdOn` etc.), compared with date and date-time literals;
 * - `string-array`: a collection of strings (selectable only);
 * - `complex`: a nested object with its own properties (`a/b` paths).
 */
export type PropertyKind =
  'string' | 'number' | 'integer' | 'boolean' | 'guid' | 'datetime-ms' | 'string-array' | 'complex';

export const SCALAR_KINDS: readonly PropertyKind[] = ['string', 'number', 'integer', 'boolean', 'guid', 'datetime-ms'];

/** A loaded record of an entity: its values keyed by property name (nested for complex properties). */
export type EntityRecord = Record<string, unknown>;

export interface PropertySpec {
  name: string;
  kind: PropertyKind;
  /**
   * Database column of a top-level property or of a nested property of a `columns`-stored complex
   * property (default: the property name). For a nested property of a `jsonb` complex property it
   * is the JSON key (default: the property name).
   */
  column?: string;
  /** A raw SQL expression instead of a column; receives the quoted table alias. Trusted code only. */
  sql?: (quotedAlias: string) => string;
  /** Default true for scalar kinds; collections and complex values are never filterable. */
  filterable?: boolean;
  /** Default true for scalar kinds. */
  sortable?: boolean;
  /** Complex properties: the nested properties. */
  properties?: PropertySpec[];
  /** Complex properties: `jsonb` (default: one JSONB column holds the object) or `columns`. */
  storage?: 'jsonb' | 'columns';
  /**
   * Whether the value can be null (default true). A top-level NOT NULL column declared
   * `nullable: false` sorts without a NULLS clause, so ORDER BY can follow a plain index.
   */
  nullable?: boolean;
}

export interface PropertyModel {
  readonly name: string;
  readonly kind: PropertyKind;
  readonly column: string;
  readonly sql?: (quotedAlias: string) => string;
  readonly filterable: boolean;
  readonly sortable: boolean;
  readonly storage: 'jsonb' | 'columns';
  readonly nullable: boolean;
  readonly properties: readonly PropertyModel[];
  property(name: string): PropertyModel | undefined;
}

/**
 * How a navigation property is loaded.
 * - `jsonb`: the related objects are stored inline with the row (e.g. a JSONB column) and arrive in
 *   the record under `property` (default: the navigation name); nested options apply in memory
 *   with the evaluator. With `column`, `selectModelRecords` loads that column into the record.
 *   (Foreign-key expansions load their rows with `selectModelRecords`, so a target model's inline
 *   navigations need `column` to be expandable in nested `$expand`.)
 * - `foreign-key`: related rows live in the target model's `table`; `parent[localKey] =
 *   child[foreignKey]` (property names). `many: true` is one-to-many (foreign key on the child),
 *   `many: false` many-to-one (e.g. `localKey: 'paymentMethodId', foreignKey: 'id'`).
 */
export type RelationSpec =
  { kind: 'jsonb'; property?: string; column?: string } | { kind: 'foreign-key'; localKey: string; foreignKey: string };

export interface NavigationSpec {
  name: string;
  /** The target model, or a thunk for cyclic models. */
  target: EntityModel | (() => EntityModel);
  many: boolean;
  relation: RelationSpec;
}

export interface NavigationModel {
  readonly name: string;
  readonly many: boolean;
  readonly relation: RelationSpec;
  readonly target: EntityModel;
}

export interface EntityModelSpec {
  name: string;
  /** Key property (scalar, top-level): stable sort tiebreak and expansion joins. */
  key: string;
  /** Table (optionally `schema.table`) the rows come from; needed to load `foreign-key` expansions. */
  table?: string;
  properties: PropertySpec[];
  navigations?: NavigationSpec[];
}

export interface EntityModel {
  readonly name: string;
  readonly key: PropertyModel;
  readonly table?: string;
  readonly properties: readonly PropertyModel[];
  readonly navigations: readonly NavigationModel[];
  property(name: string): PropertyModel | undefined;
  navigation(name: string): NavigationModel | undefined;
}

/** odataIdentifier: a letter or underscore, then letters, digits, underscores; at most 128 chars. */
export const IDENTIFIER_RE = /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Pc}\p{Cf}]{0,127}$/u;

function lookup<T extends { name: string }>(
  items: readonly T[],
  what: string,
  owner: string,
): (name: string) => T | undefined {
  const map = new Map<string, T>();
  for (const item of items) {
    if (!IDENTIFIER_RE.test(item.name)) throw new Error(`Invalid ${what} name '${item.name}' in ${owner}`);
    if (map.has(item.name)) throw new Error(`Duplicate ${what} '${item.name}' in ${owner}`);
    map.set(item.name, item);
  }
  return (name) => map.get(name);
}

function buildProperty(spec: PropertySpec, owner: string, nestedIn: PropertyModel | undefined): PropertyModel {
  const scalar = SCALAR_KINDS.includes(spec.kind);
  if (spec.kind === 'complex' && !spec.properties?.length)
    throw new Error(`Complex property '${spec.name}' in ${owner} needs properties`);
  if (spec.kind !== 'complex' && spec.properties)
    throw new Error(`Only complex properties have nested properties ('${spec.name}' in ${owner})`);
  if (nestedIn && nestedIn.storage === 'jsonb' && spec.sql)
    throw new Error(`Nested JSONB property '${spec.name}' in ${owner} cannot have sql`);
  const model: PropertyModel & { properties: PropertyModel[] } = {
    name: spec.name,
    kind: spec.kind,
    column: spec.column ?? spec.name,
    ...(spec.sql ? { sql: spec.sql } : {}),
    filterable: scalar && (spec.filterable ?? true),
    sortable: scalar && (spec.sortable ?? true),
    storage: spec.storage ?? 'jsonb',
    nullable: nestedIn !== undefined || (spec.nullable ?? true),
    properties: [],
    property: () => undefined,
  };
  if (spec.properties) {
    const nested = spec.properties.map((p) => buildProperty(p, `${owner}/${spec.name}`, model));
    model.properties.push(...nested);
    model.property = lookup(nested, 'property', `${owner}/${spec.name}`);
  }
  return Object.freeze(model);
}

/** Builds (and checks) an entity model from its description. */
export function defineEntityModel(spec: EntityModelSpec): EntityModel {
  const properties = spec.properties.map((p) => buildProperty(p, spec.name, undefined));
  const property = lookup(properties, 'property', spec.name);
  const key = property(spec.key);
  if (!key || !SCALAR_KINDS.includes(key.kind))
    throw new Error(`Key '${spec.key}' of ${spec.name} must be a scalar top-level property`);
  const navigations: NavigationModel[] = (spec.navigations ?? []).map((n) => {
    let resolved: EntityModel | undefined;
    const target = n.target;
    if (n.relation.kind === 'foreign-key' && !property(n.relation.localKey)) {
      throw new Error(`Navigation '${n.name}' of ${spec.name}: unknown local key '${n.relation.localKey}'`);
    }
    return Object.freeze({
      name: n.name,
      many: n.many,
      relation: n.relation,
      get target(): EntityModel {
        resolved ??= typeof target === 'function' ? target() : target;
        return resolved;
      },
    });
  });
  const navigation = lookup(navigations, 'navigation property', spec.name);
  for (const n of navigations) {
    if (property(n.name)) throw new Error(`'${n.name}' of ${spec.name} is both a property and a navigation property`);
  }
  return Object.freeze({
    name: spec.name,
    key,
    ...(spec.table ? { table: spec.table } : {}),
    properties,
    navigations,
    property,
    navigation,
  });
}
