/** Binding of raw (syntax-level) query options against an entity model. */
import type { ExpandItem, ExpandOptions, ExprNode, OrderByItem, SelectItem } from './ast.js';
import { bindExpression, resolvePath } from './binder.js';
import { ODataError, quoteForMessage } from './errors.js';
import type { EntityModel } from './model.js';

/** Query options as parsed, before names are resolved. */
export interface RawOptions {
  filter?: ExprNode;
  orderBy: OrderByItem[];
  select?: SelectItem[];
  expand: RawExpandItem[];
  top?: number;
  skip?: number;
  count?: boolean;
}

export interface RawExpandItem {
  path: string[];
  pos: number;
  options: RawOptions;
}

export function bindFilter(filter: ExprNode, model: EntityModel, target: string, what: string): ExprNode {
  const bound = bindExpression(filter, { model, target, purpose: 'filter', what });
  if (bound.type !== 'boolean' && bound.type !== 'null') {
    throw new ODataError('ValidationFailed', target, `${what} must be a boolean expression, got ${bound.type}`);
  }
  return bound;
}

export function bindOrderBy(
  items: readonly OrderByItem[],
  model: EntityModel,
  target: string,
  what: string,
): OrderByItem[] {
  return items.map((item) => ({
    expr: bindExpression(item.expr, { model, target, purpose: 'orderby', what }),
    direction: item.direction,
  }));
}

export function bindSelect(
  items: readonly SelectItem[],
  model: EntityModel,
  target: string,
  what: string,
): SelectItem[] {
  for (const item of items) {
    if (item.kind === 'star') continue;
    if (item.path.length === 1 && model.navigation(item.path[0]!)) continue;
    resolvePath(model, item.path, target, what);
  }
  return [...items];
}

export function bindExpand(items: readonly RawExpandItem[], model: EntityModel, target: string): ExpandItem[] {
  const out: ExpandItem[] = [];
  const seen = new Set<string>();
  const add = (item: ExpandItem, name: string) => {
    if (seen.has(name))
      throw new ODataError(
        'QuerySyntaxError',
        target,
        `navigation property ${quoteForMessage(name)} is expanded twice`,
      );
    seen.add(name);
    out.push(item);
  };
  for (const item of items) {
    if (item.path[0] === '*') {
      for (const nav of model.navigations)
        add({ path: [nav.name], navigation: nav, options: { orderBy: [], expand: [] } }, nav.name);
      continue;
    }
    const name = item.path[0]!;
    const nav = model.navigation(name);
    if (!nav) {
      if (model.property(name)) {
        throw new ODataError(
          'ValidationFailed',
          target,
          `${quoteForMessage(item.path.join('/'), 200)} is not a navigation property of ${model.name}`,
        );
      }
      throw new ODataError(
        'UnknownProperty',
        target,
        `Unknown navigation property ${quoteForMessage(item.path.join('/'), 200)} in $expand of ${model.name}`,
      );
    }
    if (item.path.length > 1) {
      throw new ODataError(
        'ValidationFailed',
        target,
        `navigation paths (${quoteForMessage(item.path.join('/'), 200)}) are not supported in $expand`,
      );
    }
    add({ path: [name], navigation: nav, options: bindNested(item.options, nav.target, target, name) }, name);
  }
  return out;
}

function bindNested(raw: RawOptions, model: EntityModel, target: string, navigation: string): ExpandOptions {
  const where = `in $expand of ${quoteForMessage(navigation)}`;
  return {
    ...(raw.filter ? { filter: bindFilter(raw.filter, model, target, `$filter ${where}`) } : {}),
    orderBy: bindOrderBy(raw.orderBy, model, target, `$orderby ${where}`),
    ...(raw.select ? { select: bindSelect(raw.select, model, target, `$select ${where}`) } : {}),
    expand: bindExpand(raw.expand, model, target),
    ...(raw.top !== undefined ? { top: raw.top } : {}),
    ...(raw.skip !== undefined ? { skip: raw.skip } : {}),
    ...(raw.count !== undefined ? { count: raw.count } : {}),
  };
}

export function unboundExpand(items: readonly RawExpandItem[]): ExpandItem[] {
  return items.map((i) => ({
    path: i.path,
    options: {
      ...(i.options.filter ? { filter: i.options.filter } : {}),
      orderBy: i.options.orderBy,
      ...(i.options.select ? { select: i.options.select } : {}),
      expand: unboundExpand(i.options.expand),
      ...(i.options.top !== undefined ? { top: i.options.top } : {}),
      ...(i.options.skip !== undefined ? { skip: i.options.skip } : {}),
      ...(i.options.count !== undefined ? { count: i.options.count } : {}),
    },
  }));
}
