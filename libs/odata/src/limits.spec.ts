import { countNodes } from './ast.js';
import { ODataError } from './errors.js';
import { parseQueryOptions } from './options.js';
import { parseFilterExpression, parseOrderByExpression } from './parser.js';
import { itemModel } from './testing/models.js';

function thrown(fn: () => unknown): ODataError {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof ODataError)) throw new Error(`expected an ODataError, got ${String(e)}`);
    return e;
  }
  throw new Error('expected an ODataError');
}

/** `not (x add 1 add 1 ... eq 0)` with `adds` additions: 4 + 2 * adds nodes. */
function filterWithNodes(n: number): string {
  const nots = n % 2 === 0 ? 1 : 2;
  const adds = (n - 3 - nots) / 2;
  return `${'not '.repeat(nots)}(x${' add 1'.repeat(adds)} eq 0)`;
}

describe('limits', () => {
  it('accepts a $filter of exactly 100 nodes', () => {
    const text = filterWithNodes(100);
    const q = parseQueryOptions({ $filter: text }, itemModel);
    expect(countNodes(q.filter!)).toBe(100);
  });

  it('rejects a $filter of 101 nodes with QueryLimitExceeded on $filter', () => {
    const text = filterWithNodes(101);
    expect(countNodes(parseFilterExpression(text, { limits: { maxNodes: 1000 } }))).toBe(101);
    const e = thrown(() => parseQueryOptions({ $filter: text }, itemModel));
    expect(e.code).toBe('QueryLimitExceeded');
    expect(e.target).toBe('$filter');
  });

  it('counts in-list items and function calls as nodes', () => {
    const list = Array.from({ length: 98 }, (_, i) => i).join(',');
    expect(countNodes(parseQueryOptions({ $filter: `x in (${list})` }, itemModel).filter!)).toBe(100);
    const e = thrown(() => parseQueryOptions({ $filter: `x in (${list},98)` }, itemModel));
    expect([e.code, e.target]).toEqual(['QueryLimitExceeded', '$filter']);
  });

  it('allows 5 $orderby items and rejects 6', () => {
    expect(parseQueryOptions({ $orderby: 'name,price desc,qty,active asc,createdOn' }, itemModel).orderBy).toHaveLength(
      5,
    );
    const e = thrown(() => parseQueryOptions({ $orderby: 'name,price,qty,active,createdOn,id' }, itemModel));
    expect([e.code, e.target]).toEqual(['QueryLimitExceeded', '$orderby']);
  });

  it('allows $expand depth 2 and rejects depth 3', () => {
    const ok = parseQueryOptions({ $expand: 'lines($expand=parts)' }, itemModel);
    expect(ok.expand[0]!.options.expand[0]!.navigation!.name).toBe('parts');
    const e = thrown(() => parseQueryOptions({ $expand: 'lines($expand=parts($expand=subParts))' }, itemModel));
    expect([e.code, e.target]).toEqual(['QueryLimitExceeded', '$expand']);
    // Also when only syntax is looked at, and for 10,000 levels (fails at level 3, no recursion blow-up).
    const deep = `${'lines($expand='.repeat(10_000)}parts${')'.repeat(10_000)}`;
    const e2 = thrown(() => parseQueryOptions({ $expand: deep }, itemModel, { limits: { maxOptionLength: 1e6 } }));
    expect([e2.code, e2.target]).toEqual(['QueryLimitExceeded', '$expand']);
  });

  it('rejects $top above 1000 and defaults to 100', () => {
    expect(parseQueryOptions({ $top: '1000' }, itemModel).top).toBe(1000);
    expect(parseQueryOptions({}, itemModel)).toMatchObject({ top: 100, topExplicit: false, skip: 0, count: false });
    const e = thrown(() => parseQueryOptions({ $top: '1001' }, itemModel));
    expect([e.code, e.target]).toEqual(['QueryLimitExceeded', '$top']);
    expect(thrown(() => parseQueryOptions({ $top: '99999999999999999999999' }, itemModel)).code).toBe(
      'QueryLimitExceeded',
    );
  });

  it.each([
    ['10,000 nested parentheses', `${'('.repeat(10_000)}x eq 1${')'.repeat(10_000)}`],
    ['10,000 unclosed parentheses', '('.repeat(10_000)],
    ['10,000 nested function calls', `${'length('.repeat(10_000)}s${')'.repeat(10_000)} eq 1`],
    ['10,000 nots', `${'not '.repeat(10_000)}a`],
    ['10,000 unary minus', `${'- '.repeat(10_000)}x eq 1`],
    ['10,000 ands', `a${' and a'.repeat(10_000)}`],
    ['nested in-lists', `x in (${'('.repeat(10_000)}`],
  ])('%s end in a clean ODataError, not a RangeError', (_name, text) => {
    const e = thrown(() => parseFilterExpression(text));
    expect(e.code).toBe('QueryLimitExceeded');
    expect(e.target).toBe('$filter');
    const viaOptions = thrown(() =>
      parseQueryOptions({ $filter: text }, itemModel, { limits: { maxOptionLength: 1e6 } }),
    );
    expect(viaOptions.code).toBe('QueryLimitExceeded');
  });

  it('limits nesting in $orderby too', () => {
    const e = thrown(() => parseOrderByExpression(`${'('.repeat(10_000)}x${')'.repeat(10_000)}`));
    expect([e.code, e.target]).toEqual(['QueryLimitExceeded', '$orderby']);
  });

  it('rejects over-long option values', () => {
    const e = thrown(() => parseQueryOptions({ $filter: `s eq '${'x'.repeat(10_000)}'` }, itemModel));
    expect([e.code, e.target]).toEqual(['QueryLimitExceeded', '$filter']);
  });

  it('applies the node limit to nested $filter in $expand', () => {
    const e = thrown(() =>
      parseQueryOptions({ $expand: `lines($filter=${filterWithNodes(101).replaceAll('x', 'quantity')})` }, itemModel),
    );
    expect([e.code, e.target]).toEqual(['QueryLimitExceeded', '$expand']);
  });
});
