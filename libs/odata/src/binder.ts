/**
 * Binds a syntax tree to an entity model: resolves property paths (UnknownProperty for anything
 * not whitelisted), checks filterable/sortable flags and types where that is cheap and certain,
 * and annotates every node with its static type. The translator and the evaluator both work on
 * bound trees, so they agree on integer vs decimal arithmetic.
 */
import type { ExprNode, FunctionName, LiteralNode, ResolvedProperty, ValueType } from './ast.js';
import { ODataError, quoteForMessage } from './errors.js';
import type { EntityModel, PropertyKind, PropertyModel } from './model.js';

export type BindPurpose = 'filter' | 'orderby';

export interface BindContext {
  model: EntityModel;
  /** Error target (`$filter`, `$orderby`, `$expand`). */
  target: string;
  purpose: BindPurpose;
  /** For messages: `$filter`, or `$filter in $expand of 'Items'`. */
  what: string;
}

const KIND_TYPES: Partial<Record<PropertyKind, ValueType>> = {
  string: 'string',
  number: 'decimal',
  integer: 'integer',
  boolean: 'boolean',
  guid: 'guid',
  'datetime-ms': 'datetime',
};

const GUID_RE = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;

type Family = 'string' | 'number' | 'boolean' | 'guid' | 'null';

export function family(t: ValueType): Family {
  switch (t) {
    case 'integer':
    case 'decimal':
    case 'datetime':
      return 'number';
    case 'string':
    case 'boolean':
    case 'guid':
    case 'null':
      return t;
  }
}

export function isNumeric(t: ValueType): boolean {
  return t === 'integer' || t === 'decimal' || t === 'datetime';
}

function literalType(node: LiteralNode): ValueType {
  switch (node.literalType) {
    case 'date':
    case 'datetimeoffset':
      return 'datetime';
    case 'null':
    case 'boolean':
    case 'string':
    case 'integer':
    case 'decimal':
    case 'guid':
      return node.literalType;
  }
}

/** Resolves a property path against a model; errors name the path and the option. */
export function resolvePath(
  model: EntityModel,
  path: readonly string[],
  target: string,
  what: string,
): ResolvedProperty {
  const shown = quoteForMessage(path.join('/'), 200);
  const first = model.property(path[0]!);
  if (!first) {
    if (model.navigation(path[0]!)) {
      throw new ODataError(
        'ValidationFailed',
        target,
        `navigation property ${quoteForMessage(path[0]!)} cannot be used in ${what}`,
      );
    }
    throw new ODataError('UnknownProperty', target, `Unknown property ${shown} in ${what} of ${model.name}`);
  }
  const chain: PropertyModel[] = [first];
  let current = first;
  for (const seg of path.slice(1)) {
    const next = current.kind === 'complex' ? current.property(seg) : undefined;
    if (!next) throw new ODataError('UnknownProperty', target, `Unknown property ${shown} in ${what} of ${model.name}`);
    chain.push(next);
    current = next;
  }
  return { chain, leaf: current };
}

export class Binder {
  constructor(private readonly ctx: BindContext) {}

  private fail(node: ExprNode, message: string): ODataError {
    return new ODataError(
      'ValidationFailed',
      this.ctx.target,
      `${message} (in ${this.ctx.what} at position ${node.pos})`,
      { position: node.pos },
    );
  }

  bind(node: ExprNode): ExprNode {
    switch (node.kind) {
      case 'literal':
        return { ...node, type: literalType(node) };
      case 'property':
        return this.bindProperty(node);
      case 'unary': {
        const operand = this.bind(node.operand);
        const t = operand.type!;
        if (node.op === 'not') {
          if (t !== 'boolean' && t !== 'null') throw this.fail(node, `'not' needs a boolean operand, got ${t}`);
          return { ...node, operand, type: 'boolean' };
        }
        if (!isNumeric(t) && t !== 'null') throw this.fail(node, `unary '-' needs a numeric operand, got ${t}`);
        return { ...node, operand, type: t === 'decimal' ? 'decimal' : 'integer' };
      }
      case 'binary':
        return this.bindBinary(node);
      case 'in':
        return this.bindIn(node);
      case 'call':
        return this.bindCall(node);
    }
  }

  private bindProperty(node: Extract<ExprNode, { kind: 'property' }>): ExprNode {
    const resolved = resolvePath(this.ctx.model, node.path, this.ctx.target, this.ctx.what);
    const leaf = resolved.leaf;
    const shown = quoteForMessage(node.path.join('/'), 200);
    if (leaf.kind === 'complex')
      throw this.fail(node, `complex property ${shown} cannot be used as a value; use a path to one of its properties`);
    if (leaf.kind === 'string-array')
      throw this.fail(
        node,
        `collection-valued property ${shown} cannot be used in ${this.ctx.purpose === 'filter' ? '$filter' : '$orderby'}`,
      );
    if (this.ctx.purpose === 'filter' && !leaf.filterable) throw this.fail(node, `property ${shown} is not filterable`);
    if (this.ctx.purpose === 'orderby' && !leaf.sortable) throw this.fail(node, `property ${shown} is not sortable`);
    return { ...node, resolved, type: KIND_TYPES[leaf.kind]! };
  }

  /** A string literal compared with a guid must be a guid; a guid literal compared with a string is its text. */
  private coerce(a: ExprNode, b: ExprNode): [ExprNode, ExprNode] {
    const fix = (lit: ExprNode, other: ExprNode): ExprNode => {
      if (lit.kind !== 'literal') return lit;
      if (lit.type === 'string' && other.type === 'guid') {
        const text = lit.value as string;
        if (!GUID_RE.test(text)) throw this.fail(lit, `${quoteForMessage(text)} is not a guid`);
        return { ...lit, literalType: 'guid', value: text.toLowerCase(), type: 'guid' };
      }
      if (lit.type === 'guid' && other.type === 'string') {
        return { ...lit, literalType: 'string', value: lit.raw, type: 'string' };
      }
      return lit;
    };
    return [fix(a, b), fix(b, a)];
  }

  private checkComparable(node: ExprNode, a: ValueType, b: ValueType, op: string): void {
    const fa = family(a);
    const fb = family(b);
    if (fa === 'null' || fb === 'null' || fa === fb) return;
    throw this.fail(node, `cannot apply '${op}' to ${a} and ${b}`);
  }

  private bindBinary(node: Extract<ExprNode, { kind: 'binary' }>): ExprNode {
    let left = this.bind(node.left);
    let right = this.bind(node.right);
    const op = node.op;
    switch (op) {
      case 'and':
      case 'or':
        for (const side of [left, right]) {
          if (side.type !== 'boolean' && side.type !== 'null')
            throw this.fail(side, `operands of '${op}' must be boolean, got ${side.type}`);
        }
        return { ...node, left, right, type: 'boolean' };
      case 'eq':
      case 'ne':
      case 'gt':
      case 'ge':
      case 'lt':
      case 'le':
        [left, right] = this.coerce(left, right);
        this.checkComparable(node, left.type!, right.type!, op);
        return { ...node, left, right, type: 'boolean' };
      case 'add':
      case 'sub':
      case 'mul':
      case 'div':
      case 'mod': {
        for (const side of [left, right]) {
          if (!isNumeric(side.type!) && side.type !== 'null')
            throw this.fail(side, `operands of '${op}' must be numeric, got ${side.type}`);
          if (op === 'mod' && side.type === 'decimal') throw this.fail(side, "operands of 'mod' must be integers");
        }
        const type: ValueType = left.type === 'decimal' || right.type === 'decimal' ? 'decimal' : 'integer';
        return { ...node, left, right, type };
      }
    }
  }

  private bindIn(node: Extract<ExprNode, { kind: 'in' }>): ExprNode {
    if (!node.list) {
      throw this.fail(node.collection ?? node, "the right operand of 'in' must be a parenthesised list of literals");
    }
    const operand = this.bind(node.operand);
    const list = node.list.map((item) => {
      const bound = this.bind(item) as LiteralNode;
      const [coerced] = this.coerce(bound, operand);
      this.checkComparable(item, operand.type!, coerced.type!, 'in');
      return coerced as LiteralNode;
    });
    return { ...node, operand, list, type: 'boolean' };
  }

  private bindCall(node: Extract<ExprNode, { kind: 'call' }>): ExprNode {
    const args = node.args.map((a) => this.bind(a));
    const want = (i: number, accepted: (t: ValueType) => boolean, what: string): void => {
      const t = args[i]!.type!;
      if (t !== 'null' && !accepted(t))
        throw this.fail(args[i]!, `argument ${i + 1} of '${node.name}' must be ${what}, got ${t}`);
    };
    const str = (t: ValueType) => t === 'string';
    const int = (t: ValueType) => t === 'integer' || t === 'datetime';
    const dt = (t: ValueType) => t === 'datetime';
    const name: FunctionName = node.name;
    let type: ValueType;
    switch (name) {
      case 'contains':
      case 'startswith':
      case 'endswith':
        want(0, str, 'a string');
        want(1, str, 'a string');
        type = 'boolean';
        break;
      case 'tolower':
      case 'toupper':
      case 'trim':
        want(0, str, 'a string');
        type = 'string';
        break;
      case 'concat':
        want(0, str, 'a string');
        want(1, str, 'a string');
        type = 'string';
        break;
      case 'length':
        want(0, str, 'a string');
        type = 'integer';
        break;
      case 'indexof':
        want(0, str, 'a string');
        want(1, str, 'a string');
        type = 'integer';
        break;
      case 'substring':
        want(0, str, 'a string');
        want(1, int, 'an integer');
        if (args.length > 2) want(2, int, 'an integer');
        type = 'string';
        break;
      case 'year':
      case 'month':
      case 'day':
      case 'hour':
      case 'minute':
      case 'second':
        want(0, dt, 'a date-time (a date-time property or a date/date-time literal)');
        type = 'integer';
        break;
    }
    return { ...node, args, type };
  }
}

export function bindExpression(node: ExprNode, ctx: BindContext): ExprNode {
  return new Binder(ctx).bind(node);
}
