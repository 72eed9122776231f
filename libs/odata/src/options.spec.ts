import { ODataError } from './errors.js';
import { parseQueryOptions, parseQueryOptionsSyntax } from './options.js';
import { itemModel } from './testing/models.js';
import { sexpr } from './testing/sexpr.js';

function thrown(fn: () => unknown): ODataError {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof ODataError)) throw new Error(`expected an ODataError, got ${String(e)}`);
    return e;
  }
  throw new Error('expected an ODataError');
}

describe('parseQueryOptions', () => {
  it('parses every option into a typed query', () => {
    const q = parseQueryOptions(
      {
        'api-version': '1.0',
        applicationConfigId: 'abc',
        $filter: "contains(name,'a') and price gt 2.5 and createdOn ge 2024-01-01T00:00:00Z",
        $orderby: 'name desc,qty',
        $select: 'id,name,address/city',
        $expand:
          'lines($select=name;$filter=quantity gt 1;$orderby=name desc;$top=2;$skip=1;$count=true;$expand=parts)',
        $top: '10',
        $skip: '20',
        $count: 'true',
      },
      itemModel,
    );
    expect(sexpr(q.filter!)).toBe("(and (and (contains name 'a') (gt price 2.5)) (ge createdOn 2024-01-01T00:00:00Z))");
    expect(q.filter!.type).toBe('boolean');
    expect(q.orderBy.map((o) => [sexpr(o.expr), o.direction])).toEqual([
      ['name', 'desc'],
      ['qty', 'asc'],
    ]);
    expect(q.select).toEqual([
      { kind: 'path', path: ['id'] },
      { kind: 'path', path: ['name'] },
      { kind: 'path', path: ['address', 'city'] },
    ]);
    expect(q).toMatchObject({ top: 10, topExplicit: true, skip: 20, count: true });
    const lines = q.expand[0]!;
    expect(lines.navigation!.name).toBe('lines');
    expect(lines.options).toMatchObject({ top: 2, skip: 1, count: true });
    expect(sexpr(lines.options.filter!)).toBe('(gt quantity 1)');
    expect(lines.options.expand[0]!.navigation!.name).toBe('parts');
  });

  it('accepts case-insensitive option names, star select and expand', () => {
    const q = parseQueryOptions({ $Filter: 'active', $SELECT: '*', $expand: '*' }, itemModel);
    expect(q.select).toEqual([{ kind: 'star' }]);
    expect(q.expand.map((e) => e.navigation!.name)).toEqual(['lines', 'owner']);
  });

  it.each<[Record<string, string>, string, string, RegExp]>([
    [{ $filter: "nope eq 'x'" }, 'UnknownProperty', '$filter', /nope/],
    [{ $filter: "address/nope eq 'x'" }, 'UnknownProperty', '$filter', /address\/nope/],
    [{ $filter: "name/x eq 'x'" }, 'UnknownProperty', '$filter', /name\/x/],
    [{ $orderby: 'nope desc' }, 'UnknownProperty', '$orderby', /nope/],
    [{ $select: 'id,nope' }, 'UnknownProperty', '$select', /nope/],
    [{ $select: 'address/nope' }, 'UnknownProperty', '$select', /address\/nope/],
    [{ $expand: 'nope' }, 'UnknownProperty', '$expand', /nope/],
    [{ $expand: 'lines($select=nope)' }, 'UnknownProperty', '$expand', /nope/],
    [{ $expand: 'lines($filter=nope eq 1)' }, 'UnknownProperty', '$expand', /nope/],
    [{ $expand: 'lines($expand=nope)' }, 'UnknownProperty', '$expand', /nope/],
    [{ $expand: 'name' }, 'ValidationFailed', '$expand', /not a navigation property/],
    [{ $filter: 'lines eq null' }, 'ValidationFailed', '$filter', /navigation property/],
    [
      { $filter: "contains(price, 'a')" },
      'ValidationFailed',
      '$filter',
      /argument 1 of 'contains' must be a string, got decimal/,
    ],
    [{ $filter: 'contains(name, 1)' }, 'ValidationFailed', '$filter', /argument 2 of 'contains' must be a string/],
    [{ $filter: 'name add 1 eq 2' }, 'ValidationFailed', '$filter', /operands of 'add' must be numeric/],
    [{ $filter: 'price mod 2 eq 1' }, 'ValidationFailed', '$filter', /'mod' must be integers/],
    [{ $filter: 'name eq 1' }, 'ValidationFailed', '$filter', /cannot apply 'eq' to string and integer/],
    [{ $filter: "createdOn gt '2020-01-01'" }, 'ValidationFailed', '$filter', /cannot apply 'gt'/],
    [{ $filter: 'active and 1' }, 'ValidationFailed', '$filter', /must be boolean/],
    [{ $filter: 'not name' }, 'ValidationFailed', '$filter', /'not' needs a boolean/],
    [{ $filter: 'name' }, 'ValidationFailed', '$filter', /must be a boolean expression/],
    [{ $filter: 'year(name) eq 1' }, 'ValidationFailed', '$filter', /date-time/],
    [{ $filter: 'year(qty) eq 1' }, 'ValidationFailed', '$filter', /date-time/],
    [{ $filter: "ref eq 'not-a-guid'" }, 'ValidationFailed', '$filter', /not a guid/],
    [{ $filter: "tags eq 'a'" }, 'ValidationFailed', '$filter', /collection-valued/],
    [{ $filter: 'address eq null' }, 'ValidationFailed', '$filter', /complex property/],
    [{ $filter: "secret eq 'x'" }, 'ValidationFailed', '$filter', /not filterable/],
    [{ $orderby: 'secret' }, 'ValidationFailed', '$orderby', /not sortable/],
    [{ $filter: 'qty in (name)' }, 'ValidationFailed', '$filter', /list of literals/],
    [{ $filter: "qty in (1, 'a')" }, 'ValidationFailed', '$filter', /cannot apply 'in'/],
    [{ $search: 'blue' }, 'QuerySyntaxError', '$search', /not supported/],
    [{ $foo: '1' }, 'QuerySyntaxError', '$foo', /Unknown query option/],
    [{ $top: '-1' }, 'QuerySyntaxError', '$top', /non-negative integer/],
    [{ $top: ' 1' }, 'QuerySyntaxError', '$top', /non-negative integer/],
    [{ $skip: 'x' }, 'QuerySyntaxError', '$skip', /non-negative integer/],
    [{ $skip: '2147483648' }, 'ValidationFailed', '$skip', /at most/],
    [{ $count: 'yes' }, 'QuerySyntaxError', '$count', /true or false/],
    [{ $top: '1', $TOP: '2' }, 'QuerySyntaxError', '$top', /more than once/],
    [{ $select: '' }, 'QuerySyntaxError', '$select', /empty/],
    [{ $select: 'name, id' }, 'QuerySyntaxError', '$select', /position 5/],
    [{ $expand: 'lines($levels=2)' }, 'QuerySyntaxError', '$expand', /\$levels/],
    [{ $expand: 'lines()' }, 'QuerySyntaxError', '$expand', /empty options/],
    [{ $expand: 'lines($top=1;$top=2)' }, 'QuerySyntaxError', '$expand', /twice/],
    [{ $expand: 'lines,lines' }, 'QuerySyntaxError', '$expand', /twice/],
    [{ $expand: "lines($filter=name eq 'a)" }, 'QuerySyntaxError', '$expand', /unterminated|missing/],
    [{ $expand: 'lines/$ref' }, 'QuerySyntaxError', '$expand', /\$ref/],
    [{ $expand: 'lines($top=1001)' }, 'QueryLimitExceeded', '$expand', /\$top/],
  ])('%j fails with %s', (query, code, target, message) => {
    const e = thrown(() => parseQueryOptions(query, itemModel));
    expect(e.code).toBe(code);
    expect(e.target).toBe(target);
    expect(e.message).toMatch(message);
    expect(e.message).not.toMatch(/SELECT|WHERE|CAST\(/);
    expect(e.toJSON().error).toMatchObject({ code, target });
  });

  it('reports positions inside nested $expand options relative to the $expand value', () => {
    const e = thrown(() => parseQueryOptions({ $expand: 'lines($filter=name eq)' }, itemModel));
    expect(e.code).toBe('QuerySyntaxError');
    expect(e.position).toBe(19);
  });

  it('coerces guid-shaped string literals for guid properties', () => {
    const q = parseQueryOptions(
      { $filter: "ref eq '01234567-89AB-cdef-0123-456789abcdef' or ref in ('11111111-2222-3333-4444-555555555555')" },
      itemModel,
    );
    expect(sexpr(q.filter!)).toContain('ref');
  });

  it('syntax-only parse resolves no names', () => {
    const q = parseQueryOptionsSyntax({ $filter: 'Unknown/Path eq 1', $expand: 'Anything($select=X)', $select: 'A/B' });
    expect(q.filter!.type).toBeUndefined();
    expect(q.expand[0]!.path).toEqual(['Anything']);
  });
});
