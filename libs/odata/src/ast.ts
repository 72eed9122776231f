import type { NavigationModel, PropertyModel } from './model.js';

/** Static type of an expression after binding against an entity model. */
export type ValueType = 'boolean' | 'string' | 'integer' | 'decimal' | 'datetime' | 'guid' | 'null';

export type LiteralType = 'null' | 'boolean' | 'string' | 'integer' | 'decimal' | 'date' | 'datetimeoffset' | 'guid';

/**
 * Literal values: `integer`, `date` and `datetimeoffset` carry a bigint (dates as Unix epoch
 * milliseconds, UTC), `decimal` a finite number, `guid` the lower-case canonical text.
 */
export type LiteralValue = null | boolean | string | bigint | number;

export const COMPARISON_OPERATORS = ['eq', 'ne', 'gt', 'ge', 'lt', 'le'] as const;
export const LOGICAL_OPERATORS = ['and', 'or'] as const;
export const ARITHMETIC_OPERATORS = ['add', 'sub', 'mul', 'div', 'mod'] as const;

export type ComparisonOperator = (typeof COMPARISON_OPERATORS)[number];
export type LogicalOperator = (typeof LOGICAL_OPERATORS)[number];
export type ArithmeticOperator = (typeof ARITHMETIC_OPERATORS)[number];
export type BinaryOperator = ComparisonOperator | LogicalOperator | ArithmeticOperator;

/** Built-in functions of the contract's subset, with their arities. */
export const FUNCTIONS = {
  contains: { min: 2, max: 2 },
  startswith: { min: 2, max: 2 },
  endswith: { min: 2, max: 2 },
  tolower: { min: 1, max: 1 },
  toupper: { min: 1, max: 1 },
  length: { min: 1, max: 1 },
  indexof: { min: 2, max: 2 },
  substring: { min: 2, max: 3 },
  trim: { min: 1, max: 1 },
  concat: { min: 2, max: 2 },
  year: { min: 1, max: 1 },
  month: { min: 1, max: 1 },
  day: { min: 1, max: 1 },
  hour: { min: 1, max: 1 },
  minute: { min: 1, max: 1 },
  second: { min: 1, max: 1 },
} as const;
export type FunctionName = keyof typeof FUNCTIONS;

interface NodeBase {
  /** 0-based offset of the node's first character in the option value. */
  readonly pos: number;
  /** Set by binding against an entity model; absent on a syntax-only tree. */
  readonly type?: ValueType;
}

export interface LiteralNode extends NodeBase {
  readonly kind: 'literal';
  readonly literalType: LiteralType;
  readonly value: LiteralValue;
  /** The literal as written (after URL decoding). */
  readonly raw: string;
}

/** A resolved property: the chain of properties from the entity root down to the leaf. */
export interface ResolvedProperty {
  readonly chain: readonly PropertyModel[];
  readonly leaf: PropertyModel;
}

export interface PropertyNode extends NodeBase {
  readonly kind: 'property';
  readonly path: readonly string[];
  readonly resolved?: ResolvedProperty;
}

export interface BinaryNode extends NodeBase {
  readonly kind: 'binary';
  readonly op: BinaryOperator;
  readonly left: ExprNode;
  readonly right: ExprNode;
}

export interface UnaryNode extends NodeBase {
  readonly kind: 'unary';
  readonly op: 'not' | 'negate';
  readonly operand: ExprNode;
}

/**
 * `operand in (l1, l2, ...)`: `list` holds the literals. The ABNF also admits a parenthesised or
 * bare expression on the right (`x in (y)`, `x in Coll`); then `list` is null and `collection`
 * holds it. Binding rejects that form (collection-valued operands are not in the contract).
 */
export interface InNode extends NodeBase {
  readonly kind: 'in';
  readonly operand: ExprNode;
  readonly list: readonly LiteralNode[] | null;
  readonly collection?: ExprNode;
}

export interface CallNode extends NodeBase {
  readonly kind: 'call';
  readonly name: FunctionName;
  readonly args: readonly ExprNode[];
}

export type ExprNode = LiteralNode | PropertyNode | BinaryNode | UnaryNode | InNode | CallNode;

export type SortDirection = 'asc' | 'desc';

export interface OrderByItem {
  readonly expr: ExprNode;
  readonly direction: SortDirection;
}

export type SelectItem = { readonly kind: 'star' } | { readonly kind: 'path'; readonly path: readonly string[] };

export interface ExpandOptions {
  readonly filter?: ExprNode;
  readonly orderBy: readonly OrderByItem[];
  readonly select?: readonly SelectItem[];
  readonly expand: readonly ExpandItem[];
  readonly top?: number;
  readonly skip?: number;
  readonly count?: boolean;
}

export interface ExpandItem {
  /** Navigation property path (`Items`, or `Address/Country` in a syntax-only parse); `['*']` for `*`. */
  readonly path: readonly string[];
  /** Set on a bound query: the navigation property expanded. */
  readonly navigation?: NavigationModel;
  readonly options: ExpandOptions;
}

/** The validated result of `parseQueryOptions`. */
export interface ODataQuery {
  readonly filter?: ExprNode;
  readonly orderBy: readonly OrderByItem[];
  /** Absent when `$select` is absent (all structural properties). */
  readonly select?: readonly SelectItem[];
  readonly expand: readonly ExpandItem[];
  /** Effective page size: `$top` or the default page size. */
  readonly top: number;
  /** True when `$top` was given explicitly. */
  readonly topExplicit: boolean;
  readonly skip: number;
  readonly count: boolean;
}

/** Number of nodes in an expression tree (the quantity limited by `maxFilterNodes`). */
export function countNodes(node: ExprNode): number {
  let count = 0;
  const stack: ExprNode[] = [node];
  while (stack.length) {
    const n = stack.pop()!;
    count++;
    switch (n.kind) {
      case 'binary':
        stack.push(n.left, n.right);
        break;
      case 'unary':
        stack.push(n.operand);
        break;
      case 'in':
        stack.push(n.operand, ...(n.list ?? []));
        if (n.collection) stack.push(n.collection);
        break;
      case 'call':
        stack.push(...n.args);
        break;
      case 'literal':
      case 'property':
        break;
    }
  }
  return count;
}
