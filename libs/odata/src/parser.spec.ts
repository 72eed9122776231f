import { ODataError } from './errors.js';
import { evaluate } from './evaluate.js';
import { parseQueryOptions } from './options.js';
import { parseFilterExpression, parseLiteral } from './parser.js';
import { itemModel } from './testing/models.js';
import { sexpr } from './testing/sexpr.js';

const shape = (text: string) => sexpr(parseFilterExpression(text));
const typed = (text: string) => parseQueryOptions({ $filter: text }, itemModel).filter!;
const run = (text: string, row: Record<string, unknown>) => evaluate(typed(text), row);

function syntaxError(text: string): ODataError {
  let error: unknown;
  try {
    parseFilterExpression(text);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ODataError);
  return error as ODataError;
}

describe('precedence and associativity (tree shape)', () => {
  it.each([
    ['a or b and c', '(or a (and b c))'],
    ['a and b or c', '(or (and a b) c)'],
    ['a or b or c', '(or (or a b) c)'],
    ['a and b and c', '(and (and a b) c)'],
    ['not a eq 1 and b', '(and (not (eq a 1)) b)'],
    ['not a and b', '(and (not a) b)'],
    ['not not a', '(not (not a))'],
    ['not (a and b)', '(not (and a b))'],
    ['not a or b', '(or (not a) b)'],
    ['x sub 2 add 3', '(add (sub x 2) 3)'],
    ['x add 2 sub 3', '(sub (add x 2) 3)'],
    ['x div 2 mul 3', '(mul (div x 2) 3)'],
    ['x mul 2 div 3', '(div (mul x 2) 3)'],
    ['x mod 3 mul 2', '(mul (mod x 3) 2)'],
    ['x add 2 mul 3', '(add x (mul 2 3))'],
    ['x mul 2 add 3', '(add (mul x 2) 3)'],
    ['x sub 1 sub 1 sub 1', '(sub (sub (sub x 1) 1) 1)'],
    ['(x add 2) mul 3', '(mul (add x 2) 3)'],
    ['x add 1 eq y sub 2', '(eq (add x 1) (sub y 2))'],
    ['- x mul 2', '(mul (- x) 2)'],
    ['-x add 2', '(add (- x) 2)'],
    ['-(x add 2)', '(- (add x 2))'],
    ['- - x', '(- (- x))'],
    ['x eq -5', '(eq x -5)'],
    ['x eq 1 or y eq 2 and z eq 3', '(or (eq x 1) (and (eq y 2) (eq z 3)))'],
    ['(x eq 1 or y eq 2) and z eq 3', '(and (or (eq x 1) (eq y 2)) (eq z 3))'],
    ['a eq b eq c', '(eq (eq a b) c)'],
    ['x lt y eq a', '(eq (lt x y) a)'],
    ['x in (1, 2) and a', '(and (in x [1 2]) a)'],
    ['x add 1 in (1,2)', '(in (add x 1) [1 2])'],
    ['not x in (1)', '(not (in x [1]))'],
    ["contains(s,'a') or not startswith(s,'b') and a", "(or (contains s 'a') (and (not (startswith s 'b')) a))"],
    ["Name EQ 'Milk' AND Price LT 2.55", "(and (eq Name 'Milk') (lt Price 2.55))"],
    ["address/city eq 'x'", "(eq address/city 'x')"],
    ["length(concat(s, 'x')) gt 2", "(gt (length (concat s 'x')) 2)"],
    ["substring(s, 1, 2) eq 'b'", "(eq (substring s 1 2) 'b')"],
    ['( true )', 'true'],
  ])('%s', (text, expected) => {
    expect(shape(text)).toBe(expected);
  });
});

describe('precedence and associativity (evaluation)', () => {
  const row = { a: true, b: false, c: false, x: 10, y: 3, z: 0, d: 2.5, s: 'hello' };
  it.each<[string, Record<string, unknown>, unknown]>([
    ['a or b and c', row, true], // (a or b) and c would be false
    ['not x eq 1 and a', { ...row, x: 2, a: false }, false], // not (x eq 1 and a) would be true
    ['x sub 2 add 3 eq 11', row, true], // x sub (2 add 3) = 5
    ['x div 2 mul 3 eq 15', row, true], // x div (2 mul 3) = 1
    ['x add 2 mul 3 eq 16', row, true],
    ['x mod 3 mul 2 eq 2', row, true],
    ['- x mul 2 eq -20', row, true],
    ['7 div 2 eq 3', row, true],
    ['-7 div 2 eq -3', row, true],
    ['-7 mod 2 eq -1', row, true],
    ['7 mod -2 eq 1', row, true],
    ['7 div 2.0 eq 3.5', row, true],
    ['x div 4 eq 2', row, true],
    ['x div 4.0 eq 2.5', row, true],
    ['d mul 2 eq 5', row, true],
    ['x div 0 eq null', row, true],
    ['x div z eq null', row, true],
    ['x add y mul 2 sub 1 eq 15', row, true],
  ])('%s', (text, r, expected) => {
    expect(run(text, r)).toBe(expected);
  });
});

describe('null semantics of the evaluator', () => {
  it.each<[string, Record<string, unknown>, unknown]>([
    ['qty eq null', { qty: null }, true],
    ['qty ne null', { qty: null }, false],
    ['qty eq 1', { qty: null }, false],
    ['qty ne 1', { qty: null }, true],
    ['qty gt 1', { qty: null }, false],
    ['qty le 1', { qty: null }, false],
    ['not (qty gt 1)', { qty: null }, true],
    ['not active', { active: null }, null],
    ['active and false', { active: null }, false],
    ['active or true', { active: null }, true],
    ['active and true', { active: null }, null],
    ['null eq null', {}, true],
    ["contains(name, 'x')", { name: null }, null],
    ["not contains(name, 'x')", { name: null }, null],
    ["name ne 'x'", { name: null }, true],
    ['qty add 1 eq null', { qty: null }, true],
    ['qty in (1, null)', { qty: null }, true],
    ['qty in (1, 2)', { qty: null }, false],
    ['not (qty in (1, 2))', { qty: null }, true],
    ['length(name) eq null', { name: null }, true],
    ['address/city eq null', { address: null }, true],
    ["address/city eq 'x'", { address: { city: 'x' } }, true],
  ])('%s', (text, r, expected) => {
    expect(run(text, r)).toBe(expected);
  });
});

describe('string and date functions in memory', () => {
  const row = { name: 'Grüße 😀 World', createdOn: Date.UTC(2024, 1, 29, 13, 45, 30, 123), s: '  x  ' };
  it.each<[string, unknown]>([
    ['length(name) eq 13', true],
    ["indexof(name, 'World') eq 8", true],
    ["indexof(name, 'nope') eq -1", true],
    ["substring(name, 6, 1) eq '😀'", true],
    ["substring(name, 8) eq 'World'", true],
    ["substring(name, -2, 3) eq 'G'", true],
    ["substring(name, 100) eq ''", true],
    ["substring(name, 2, -1) eq ''", true],
    ["tolower(name) eq 'grüße 😀 world'", true],
    ["toupper(name) eq 'GRÜSSE 😀 WORLD'", true],
    ["trim(s) eq 'x'", true],
    ["concat(trim(s), 'y') eq 'xy'", true],
    ["startswith(name, 'Grü') and endswith(name, 'ld') and contains(name, '😀')", true],
    ['year(createdOn) eq 2024 and month(createdOn) eq 2 and day(createdOn) eq 29', true],
    ['hour(createdOn) eq 13 and minute(createdOn) eq 45 and second(createdOn) eq 30', true],
    ['createdOn gt 2024-02-29T13:45:30Z and createdOn lt 2024-02-29T13:45:30.124Z', true],
    ['createdOn ge 2024-02-29 and createdOn lt 2024-03-01', true],
    ['createdOn eq 2024-02-29T14:45:30.123+01:00', true],
    ['year(1969-12-31T23:59:59Z) eq 1969 and second(1969-12-31T23:59:59Z) eq 59', true],
    ['year(-0001-03-01) eq -1 and month(0000-02-29) eq 2', true],
  ])('%s', (text, expected) => {
    expect(run(text, row)).toBe(expected);
  });
});

describe('syntax errors', () => {
  it.each([
    ['', 0],
    [' true', 0],
    ['true ', 5],
    ["Name eq 'Milk", 8],
    ['Name eq', 5],
    ['Name eqx 1', 5],
    ['(Name eq 1', 10],
    ['Name eq 1)', 9],
    ['contains(Name)', 0],
    ['substring(Name,1,2,3)', 0],
    ['foo(1)', 0],
    ['now()', 0],
    ['Name has 1', 5],
    ['Price divby 2', 6],
    ['Items/any(d:d eq 1)', 6],
    ['$it eq 1', 0],
    ['@a eq 1', 0],
    ['Name in (Name, Other)', 13],
    ["Name eq 'a' and", 12],
    ['2x4 eq 1', 1],
    ['42. eq 1', 2],
    ["Name eq 'a\u0000'", 8],
    ['Name eq 2011-12-31T24:00Z', 19],
    ['Name eq 2012-02-30', 16],
    ['Name eq 99999999999999999999', 8],
    ["Name eq duration'P1D'", 8],
    ['Model.Fn() eq 1', 5],
    ['[1,2] eq 1', 0],
  ])('%j', (text, position) => {
    const e = syntaxError(text);
    expect(e.code).toBe('QuerySyntaxError');
    expect(e.target).toBe('$filter');
    expect(e.position).toBe(position);
    expect(e.message).toContain(`position ${position}`);
  });
});

describe('literals', () => {
  it.each<[string, string, unknown]>([
    ["'O''Neil'", 'string', "O'Neil"],
    ['42', 'integer', 42n],
    ['+42', 'integer', 42n],
    ['-9223372036854775808', 'integer', -(2n ** 63n)],
    ['3.14', 'decimal', 3.14],
    ['-0.314e1', 'decimal', -3.14],
    ['TRUE', 'boolean', true],
    ['null', 'null', null],
    ['2012-09-03', 'date', BigInt(Date.UTC(2012, 8, 3))],
    ['2012-09-03T13:52Z', 'datetimeoffset', BigInt(Date.UTC(2012, 8, 3, 13, 52))],
    ['2012-09-03T14:53+02:00', 'datetimeoffset', BigInt(Date.UTC(2012, 8, 3, 12, 53))],
    ['1972-06-30T23:59:60Z', 'datetimeoffset', BigInt(Date.UTC(1972, 6, 1))],
    ['2012-08-31T18:19:22.1Z', 'datetimeoffset', BigInt(Date.UTC(2012, 7, 31, 18, 19, 22, 100))],
    ['0000-01-01', 'date', BigInt(new Date('0000-01-01T00:00:00Z').getTime())],
    ['01234567-89AB-cdef-0123-456789abcdef', 'guid', '01234567-89ab-cdef-0123-456789abcdef'],
  ])('%s', (text, type, value) => {
    const lit = parseLiteral(text);
    expect(lit.literalType).toBe(type);
    expect(lit.value).toEqual(value);
  });

  it.each([
    '9223372036854775808',
    'NaN',
    'INF',
    '-INF',
    "'a'b'",
    '2012-13-01',
    '2012-09-03T13:52:00.0001Z',
    'Null',
    '.5',
    '5.',
  ])('rejects %s', (text) => {
    expect(() => parseLiteral(text)).toThrow(ODataError);
  });
});
