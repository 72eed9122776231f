import type { ExprNode } from '../ast.js';

/** Renders a tree as an S-expression, e.g. `(or a (and b c))`, to assert tree shapes. */
export function sexpr(node: ExprNode): string {
  switch (node.kind) {
    case 'literal':
      return node.raw;
    case 'property':
      return node.path.join('/');
    case 'binary':
      return `(${node.op} ${sexpr(node.left)} ${sexpr(node.right)})`;
    case 'unary':
      return `(${node.op === 'not' ? 'not' : '-'} ${sexpr(node.operand)})`;
    case 'in':
      return node.list
        ? `(in ${sexpr(node.operand)} [${node.list.map(sexpr).join(' ')}])`
        : `(in ${sexpr(node.operand)} ${sexpr(node.collection!)})`;
    case 'call':
      return `(${node.name}${node.args.map((a) => ` ${sexpr(a)}`).join('')})`;
  }
}
