/**
 * Conformance against the OASIS OData ABNF test cases (copied into libs/odata/conformance, see
 * PROVENANCE.txt there). Cases are selected by rule (query options, expressions, URL literals,
 * query parts of URLs); those outside the contract's subset are excluded below, each with its
 * reason. Every remaining case must be accepted or rejected as the test file says. The parse is
 * syntax-only (names are not resolved: the cases use the OASIS sample model).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { FUNCTIONS, type LiteralNode } from './ast.js';
import { ODataError } from './errors.js';
import { parseQueryOptionsSyntax, type QueryParams } from './options.js';
import { parseFilterExpression, parseLiteral } from './parser.js';

interface TestCase {
  index: number;
  name: string;
  rule: string;
  input: string;
  failAt?: number;
}

const conformanceDir = fileURLToPath(new URL('../conformance/', import.meta.url));
const doc = parse(readFileSync(`${conformanceDir}odata-abnf-testcases.yaml`, 'utf8'), { schema: 'failsafe' }) as {
  TestCases: Array<{ Name: string; Rule: string; Input: string; FailAt?: string }>;
};
const cases: TestCase[] = doc.TestCases.map((c, i) => ({
  index: i + 1,
  name: c.Name,
  rule: c.Rule,
  input: c.Input,
  ...(c.FailAt !== undefined ? { failAt: Number(c.FailAt) } : {}),
}));

// ---- selection: rules that concern the query options of the contract ---------------------------

const QUERY_RULES = new Set([
  'queryOptions',
  'systemQueryOption',
  'customQueryOption',
  'filter',
  'orderby',
  'orderBy',
  'select',
  'expand',
  'search',
  'searchExpr',
  'compute',
  'skiptoken',
  'deltatoken',
]);
const EXPRESSION_RULES = new Set([
  'commonExpr',
  'boolCommonExpr',
  'boolcommonExpr',
  'notExpr',
  'firstMemberExpr',
  'propertyPathExpr',
  'isofExpr',
  'anyExpr',
]);
const URI_RULES = new Set(['odataUri', 'odataRelativeUri']);

type LiteralCheck = (lit: LiteralNode) => boolean;
const isNumber: LiteralCheck = (l) => l.literalType === 'integer' || l.literalType === 'decimal';
const isInteger: LiteralCheck = (l) => l.literalType === 'integer';
/** URL literal rules: the input is percent-decoded first (as the HTTP layer does). */
const URL_LITERAL_RULES: Record<string, LiteralCheck> = {
  primitiveLiteral: () => true,
  null: (l) => l.literalType === 'null',
  boolean: (l) => l.literalType === 'boolean',
  stringLiteral: (l) => l.literalType === 'string',
  guid: (l) => l.literalType === 'guid',
  date: (l) => l.literalType === 'date',
  dateTimeOffsetLiteral: (l) => l.literalType === 'datetimeoffset',
  dateTimeOffsetValueInUrl: (l) => l.literalType === 'datetimeoffset',
  decimalLiteral: isNumber,
  doubleLiteral: isNumber,
  singleLiteral: isNumber,
  sbyteLiteral: isInteger,
  int16Literal: isInteger,
  int32Literal: isInteger,
  int64Literal: isInteger,
};
/**
 * Payload value rules whose grammar equals the URL literal grammar minus percent-encoding: tested
 * with the same literal parser on the raw input (no decoding, so `%3A` must fail as the file says).
 */
const PAYLOAD_LITERAL_RULES: Record<string, LiteralCheck> = {
  dateValue: (l) => l.literalType === 'date',
  dateTimeOffsetValue: (l) => l.literalType === 'datetimeoffset',
  decimalValue: isNumber,
  doubleValue: isNumber,
  singleValue: isNumber,
  byteValue: isInteger,
  sbyteValue: isInteger,
  int16Value: isInteger,
  int32Value: isInteger,
  int64Value: isInteger,
  primitiveValue: () => true,
};
/** Literal rules of types the contract does not have: selected so that they show up as excluded. */
const OTHER_LITERAL_RULES = new Set([
  'booleanValue',
  'binaryLiteral',
  'durationValue',
  'durationLiteral',
  'timeOfDayValue',
  'timeOfDayLiteral',
  'enumLiteral',
  'enumValue',
  'stringInUrl',
]);

function selected(c: TestCase): boolean {
  if (QUERY_RULES.has(c.rule) || EXPRESSION_RULES.has(c.rule) || c.rule === 'odataIdentifier') return true;
  if (c.rule in URL_LITERAL_RULES || c.rule in PAYLOAD_LITERAL_RULES || OTHER_LITERAL_RULES.has(c.rule)) return true;
  if (/^geo(graphy|metry)/.test(c.rule)) return true;
  return URI_RULES.has(c.rule) && c.input.includes('?');
}

// ---- exclusions: features outside the contract's subset, each with its reason -----------------

/** The part of a case the engine sees: the query part of a URL, else the whole input. */
function subject(c: TestCase): string {
  return URI_RULES.has(c.rule) ? c.input.slice(c.input.indexOf('?') + 1) : c.input;
}

/** That text with string literals blanked, so patterns do not match inside them. */
function code(c: TestCase): string {
  return subject(c).replace(/'(?:[^']|'')*'/g, "''");
}

interface Exclusion {
  reason: string;
  applies: (c: TestCase) => boolean;
}

const UNSUPPORTED_FUNCTION_NAMES = [
  'matchesPattern',
  'fractionalseconds',
  'totalseconds',
  'totaloffsetminutes',
  'mindatetime',
  'maxdatetime',
  'now',
  'round',
  'floor',
  'ceiling',
  'cast',
  'isof',
  'hassubset',
  'hassubsequence',
  'case',
  'date',
  'time',
];
const UNSUPPORTED_FUNCTIONS = new RegExp(`\\b(${UNSUPPORTED_FUNCTION_NAMES.join('|')})(\\(|%28)`, 'i');

const EXCLUSIONS: Exclusion[] = [
  {
    reason:
      'literal type not in the contract (binary, duration, time of day, enumeration, geography/geometry, JSON string)',
    applies: (c) => (OTHER_LITERAL_RULES.has(c.rule) && c.rule !== 'booleanValue') || /^geo(graphy|metry)/.test(c.rule),
  },
  {
    reason: 'booleanValue is a case-sensitive payload rule; URL booleans are case-insensitive',
    applies: (c) => c.rule === 'booleanValue',
  },
  {
    reason: 'INF / NaN number literals not supported (PostgreSQL and JavaScript order NaN differently)',
    applies: (c) =>
      (c.rule in PAYLOAD_LITERAL_RULES || c.rule in URL_LITERAL_RULES) &&
      /^-?(INF|NaN)$/.test(c.input) &&
      c.failAt === undefined,
  },
  {
    reason: 'payload value of a type not in the contract (enumeration member, geography, binary)',
    applies: (c) => c.rule === 'primitiveValue' && [88, 89, 92, 93].includes(c.index),
  },
  {
    reason:
      'system query option not in the contract ($search, $compute, $format, $index, $schemaversion, $skiptoken, $deltatoken, $id, $levels)',
    applies: (c) =>
      ['search', 'searchExpr', 'compute', 'skiptoken', 'deltatoken', 'systemQueryOption'].includes(c.rule) ||
      /(^|[?&(;])\$?(search|compute|format|index|schemaversion|skiptoken|deltatoken|id|levels)=/i.test(code(c)),
  },
  {
    reason: "OData 4.01: system query option names without '$' (the contract ignores parameters without '$')",
    applies: (c) =>
      QUERY_RULES.has(c.rule) && /(^|[?&(;])(filter|expand|select|orderby|top|skip|count)=/i.test(code(c)),
  },
  {
    reason: 'parameter aliases and annotations (@...) not in the contract',
    applies: (c) => code(c).includes('@'),
  },
  {
    reason: '$it / $this / $root not in the contract',
    applies: (c) => /\$(it|this|root)\b/.test(c.input),
  },
  {
    reason: 'lambda operators any/all not in the contract',
    applies: (c) => c.rule === 'anyExpr' || /(^|\/)(any|all)\(/.test(code(c)),
  },
  {
    reason: 'JSON array / object literals (OData 4.01) not in the contract',
    applies: (c) => /[[{"]|%5B|%7B|%22/.test(code(c)),
  },
  {
    reason:
      'qualified names (namespaces, type casts, enumeration literals, custom and geo functions) not in the contract',
    applies: (c) => (c.rule !== 'odataIdentifier' && /[A-Za-z_]\w*\.[A-Za-z_*]/.test(code(c))) || c.rule === 'isofExpr',
  },
  {
    reason: 'function not in the contract',
    applies: (c) => UNSUPPORTED_FUNCTIONS.test(code(c)),
  },
  {
    reason: 'operators has (enumerations) and divby (OData 4.01) not in the contract',
    applies: (c) => /\s(has|divby)\s/.test(code(c)),
  },
  {
    reason: '$count / $filter / $ref / $value path segments not in the contract',
    applies: (c) => /\/\$(count|filter|ref|value)\b|^\$value|=\$value/.test(subject(c)),
  },
  {
    reason: 'key access on a collection path (Items(1)) not in the contract',
    applies: (c) => c.index === 482,
  },
  {
    reason:
      'navigation paths through complex properties or type-cast segments in $expand (only navigation properties of the entity are expandable)',
    applies: (c) => [513, 514, 273, 275].includes(c.index) || /\$expand=[^&]*\/\*/.test(subject(c)),
  },
  {
    reason: 'nested options or operation signatures inside $select (OData 4.01) not in the contract',
    applies: (c) => /(^|&)\$select=[^&]*\(/.test(subject(c)),
  },
  {
    reason: 'custom (bound or unbound) functions not in the contract',
    applies: (c) =>
      EXPRESSION_RULES.has(c.rule) &&
      [...code(c).matchAll(/([A-Za-z_]\w*)\(/g)].some(
        (m) => !Object.hasOwn(FUNCTIONS, m[1]!.toLowerCase()) && !UNSUPPORTED_FUNCTIONS.test(`${m[1]}(`),
      ),
  },
];

function exclusionOf(c: TestCase): string | undefined {
  return EXCLUSIONS.find((e) => e.applies(c))?.reason;
}

// ---- running a case ------------------------------------------------------------------------------

function queryParams(query: string): QueryParams {
  const params: Record<string, string> = {};
  if (query === '') return params;
  for (const part of query.split('&')) {
    const eq = part.indexOf('=');
    const name = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
    const value = decodeURIComponent(eq < 0 ? '' : part.slice(eq + 1));
    if (Object.hasOwn(params, name)) throw new ODataError('QuerySyntaxError', name, 'repeated');
    params[name] = value;
  }
  return params;
}

/** True when the engine accepts the input for the case's rule. Throws for non-OData errors. */
function accepts(c: TestCase): boolean {
  try {
    if (QUERY_RULES.has(c.rule)) {
      parseQueryOptionsSyntax(queryParams(c.input));
    } else if (URI_RULES.has(c.rule)) {
      parseQueryOptionsSyntax(queryParams(c.input.slice(c.input.indexOf('?') + 1)));
    } else if (EXPRESSION_RULES.has(c.rule)) {
      parseFilterExpression(decodeURIComponent(c.input));
    } else if (c.rule === 'odataIdentifier') {
      const q = parseQueryOptionsSyntax({ $select: c.input });
      if (q.select!.length !== 1 || q.select![0]!.kind !== 'path' || q.select![0]!.path.length !== 1) return false;
    } else if (c.rule in URL_LITERAL_RULES) {
      return URL_LITERAL_RULES[c.rule]!(parseLiteral(decodeURIComponent(c.input)));
    } else if (c.rule in PAYLOAD_LITERAL_RULES) {
      return PAYLOAD_LITERAL_RULES[c.rule]!(parseLiteral(c.input));
    } else {
      throw new Error(`no runner for rule ${c.rule}`);
    }
    return true;
  } catch (e) {
    if (e instanceof ODataError) return false;
    throw e;
  }
}

// ---- the tests -----------------------------------------------------------------------------------

const chosen = cases.filter(selected);
const excluded = new Map<string, TestCase[]>();
const included: TestCase[] = [];
for (const c of chosen) {
  const reason = exclusionOf(c);
  if (reason) {
    const list = excluded.get(reason) ?? [];
    list.push(c);
    excluded.set(reason, list);
  } else {
    included.push(c);
  }
}
const results = { run: 0, passed: 0 };

describe('OASIS OData ABNF test cases', () => {
  afterAll(() => {
    const lines = [
      `OData ABNF conformance: ${cases.length} cases in the file, ${chosen.length} selected (query options, expressions, literals, query parts of URLs)`,
      `  run: ${results.run}, passed: ${results.passed}, failed: ${results.run - results.passed}`,
      `  excluded: ${chosen.length - included.length}`,
      ...[...excluded].map(([reason, list]) => `    ${String(list.length).padStart(3)}  ${reason}`),
    ];
    if (process.env['ODATA_CONFORMANCE_LIST'] === '1') {
      for (const [reason, list] of excluded)
        for (const c of list) lines.push(`EXCLUDED #${c.index} ${c.rule} ${JSON.stringify(c.input)} -- ${reason}`);
      for (const c of included)
        lines.push(
          `RUN #${c.index} ${c.rule} ${c.failAt === undefined ? 'accept' : 'reject'} ${JSON.stringify(c.input)}`,
        );
    }
    console.log(lines.join('\n'));
  });

  it('selects a meaningful number of cases', () => {
    expect(included.length).toBeGreaterThan(150);
  });

  it.each(
    included.map(
      (c) =>
        [
          `#${c.index} ${c.rule} ${c.failAt === undefined ? 'accepts' : 'rejects'} ${JSON.stringify(c.input)} (${c.name})`,
          c,
        ] as const,
    ),
  )('%s', (_title, c) => {
    results.run++;
    expect(accepts(c)).toBe(c.failAt === undefined);
    results.passed++;
  });
});
