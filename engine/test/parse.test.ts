/**
 * The parse stage against PostgREST's URL grammar (its API reference: filters, logic trees, select,
 * order, paging) and the engine's README (its query language and errors). Expectations come from what a
 * PostgREST user writes and expects, not from the implementation.
 */

import { describe, expect, it } from 'vitest';
import { ApiError, type ErrorCode } from '../index.ts';
import type { CompareOperator, SearchOperator } from '../operators.ts';
import { parseFilterValue, parseLogicTree } from '../parse/filter.ts';
import { parseAccept, parsePreferences, parseRange } from '../parse/headers.ts';
import { parseRequest } from '../parse/index.ts';
import { parseEntityTags } from '../parse/preconditions.ts';
import { parseQuery as parseQueryWithParts } from '../parse/query.ts';
import { parseOrder, parseSelect } from '../parse/select.ts';
import type {
  Condition,
  EmbedItem,
  FieldRef,
  FilterNode,
  JsonPathStep,
  LogicNode,
  Method,
  Operation,
  OrderTerm,
  Preferences,
  QueryParams,
  SelectItem,
} from '../request.ts';

// ---------------------------------------------------------------------------------------------
// Builders for expected values

/** The parsed query without each top-level filter's part (checked on its own, below). */
const parseQuery = (raw: string): QueryParams => {
  const parsed = parseQueryWithParts(raw);
  return { ...parsed, where: parsed.where.map((c) => (c.kind === 'filter' ? { ...c, part: undefined } : c)) };
};

const field = (name: string, ...jsonPath: JsonPathStep[]): FieldRef => ({ name, jsonPath });
const arrow = (key: string | number): JsonPathStep => ({ arrow: '->', key });
const arrow2 = (key: string | number): JsonPathStep => ({ arrow: '->>', key });

const quant = (op: CompareOperator, value: string, quantifier: 'any' | 'all' | null = null): Operation => ({
  kind: 'compare',
  op,
  quantifier,
  value,
});
const simple = (op: CompareOperator, value: string): Operation => ({ kind: 'compare', op, quantifier: null, value });
const inList = (...values: string[]): Operation => ({ kind: 'in', values });
const fts = (op: SearchOperator, value: string, config: string | null = null): Operation => ({
  kind: 'search',
  op,
  config,
  value,
});

const filter = (f: FieldRef | string, operation: Operation, negated = false): FilterNode => ({
  kind: 'filter',
  field: typeof f === 'string' ? field(f) : f,
  negated,
  operation,
});
const or = (children: Condition[], negated = false): LogicNode => ({ kind: 'logic', op: 'or', negated, children });
const and = (children: Condition[], negated = false): LogicNode => ({ kind: 'logic', op: 'and', negated, children });

const col = (
  name: string,
  alias: string | null = null,
  cast: string | null = null,
  ...jsonPath: JsonPathStep[]
): SelectItem => ({
  kind: 'field',
  field: field(name, ...jsonPath),
  alias,
  cast,
  aggregate: null,
});
const term = (
  f: FieldRef | string,
  direction: 'asc' | 'desc' | null = null,
  nulls: 'first' | 'last' | null = null,
): OrderTerm => ({
  relation: null,
  field: typeof f === 'string' ? field(f) : f,
  direction,
  nulls,
});

const EMPTY_QUERY: QueryParams = {
  select: null,
  where: [],
  order: [],
  limit: null,
  offset: null,
  embedded: new Map(),
  columns: null,
  onConflict: null,
};

const NO_PREFS: Preferences = {
  count: null,
  return: null,
  resolution: null,
  missing: null,
  params: null,
  handling: null,
  tx: null,
  maxAffected: null,
};

// ---------------------------------------------------------------------------------------------
// Error helpers

function caught(fn: () => unknown): ApiError {
  let result: unknown;
  try {
    result = fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw new Error(`expected an ApiError, got ${String(e)}`);
  }
  throw new Error(`expected an ApiError, but parsing succeeded with ${JSON.stringify(result)}`);
}

interface SyntaxExpectation {
  /** The parameter name as written, which the message must name. */
  key: string;
  /** The parameter value as written (decoded), which the message must show. */
  value: string;
  /** 0-based index into `value` of the character the error should point at. */
  at?: number;
  code?: ErrorCode;
}

/**
 * A parse error says where and what was expected: a 400 with the code, a message naming the
 * parameter and its value, a "column N" position and an "expected ..." part. With `at`, the
 * column must point at that character of the value (columns count from 1, either inside the value
 * alone or inside `key=value` when the message shows that).
 */
function expectSyntaxError(fn: () => unknown, x: SyntaxExpectation): ApiError {
  const e = caught(fn);
  expect(e.code).toBe(x.code ?? 'INVALID_QUERY');
  expect(e.status).toBe(400);
  expect(e.message).toContain(x.key);
  expect(e.message).toContain(x.value);
  expect(e.message).toMatch(/column \d+/);
  expect(e.message).toMatch(/expect/i);
  if (x.at !== undefined) {
    const column = Number(/column (\d+)/.exec(e.message)?.[1]);
    const shownWithKey = e.message.includes(`${x.key}=${x.value}`);
    const expected = shownWithKey ? x.key.length + 1 + x.at + 1 : x.at + 1;
    expect(column).toBe(expected);
  }
  return e;
}

const only = (raw: string): Condition => {
  const q = parseQuery(raw);
  expect(q.where).toHaveLength(1);
  return q.where[0]!;
};

// =============================================================================================
// 1. Query string splitting and decoding
// =============================================================================================

describe('query string: splitting and decoding', () => {
  it('tells each top-level filter the query string part it was written in, for the read cache', () => {
    const { where, embedded } = parseQueryWithParts('select=*,deal(*)&&a=eq.1&x&or=(b.eq.2)&deal.c=eq.3&d=gt.4');
    expect(where.map((c) => (c.kind === 'filter' ? [c.field.name, c.part] : [c.kind]))).toEqual([
      ['a', 2],
      ['logic'],
      ['d', 6],
    ]);
    expect(embedded.get('deal')?.where[0]).not.toHaveProperty('part');
  });

  it('an empty query string gives the defaults', () => {
    expect(parseQuery('')).toEqual(EMPTY_QUERY);
  });

  it('a leading "?" is accepted', () => {
    expect(parseQuery('?id=eq.1')).toEqual({ ...EMPTY_QUERY, where: [filter('id', quant('eq', '1'))] });
    expect(parseQuery('id=eq.1')).toEqual({ ...EMPTY_QUERY, where: [filter('id', quant('eq', '1'))] });
  });

  it('keys without "=" are ignored entirely', () => {
    expect(parseQuery('id')).toEqual(EMPTY_QUERY);
    expect(parseQuery('id&name=eq.x&limit&order')).toEqual({
      ...EMPTY_QUERY,
      where: [filter('name', quant('eq', 'x'))],
    });
  });

  it('empty parts between "&" are ignored', () => {
    expect(parseQuery('&&id=eq.1&&')).toEqual({ ...EMPTY_QUERY, where: [filter('id', quant('eq', '1'))] });
  });

  it('"+" decodes to a space in values', () => {
    expect(only('name=eq.John+Smith')).toEqual(filter('name', quant('eq', 'John Smith')));
  });

  it('%2B decodes to a literal "+"', () => {
    expect(only('name=eq.a%2Bb')).toEqual(filter('name', quant('eq', 'a+b')));
  });

  it('percent-encoded UTF-8 is decoded', () => {
    expect(only('name=eq.caf%C3%A9')).toEqual(filter('name', quant('eq', 'café')));
  });

  it('%20 decodes to a space', () => {
    expect(only('tsv=not.phfts(english).The%20Fat%20Cats')).toEqual(
      filter('tsv', fts('phfts', 'The Fat Cats', 'english'), true),
    );
  });

  it('%26 carries a literal "&" inside a value (fts.fun%26possible)', () => {
    expect(only('text_search_vector=fts.fun%26possible')).toEqual(
      filter('text_search_vector', fts('fts', 'fun&possible')),
    );
  });

  it('keys are percent-decoded too', () => {
    expect(only('%22limit%22=eq.3')).toEqual(filter('limit', quant('eq', '3')));
    expect(only('first%20name=eq.x')).toEqual(filter('first name', quant('eq', 'x')));
  });

  it('decoding happens before parsing: %2C inside an in-list separates elements', () => {
    expect(only('id=in.(a%2Cb)')).toEqual(filter('id', inList('a', 'b')));
  });

  it('decoding happens before parsing: %22 quotes inside an in-list group a comma', () => {
    expect(only('name=in.(%22a,b%22,c)')).toEqual(filter('name', inList('a,b', 'c')));
  });

  it('"=" inside a value belongs to the value', () => {
    expect(only('expr=eq.a=b')).toEqual(filter('expr', quant('eq', 'a=b')));
  });

  it('malformed percent-encoding is a 400 INVALID_QUERY', () => {
    const e = caught(() => parseQuery('name=eq.%ZZ'));
    expect(e.code).toBe('INVALID_QUERY');
    expect(e.status).toBe(400);
  });

  it('columns= and on_conflict= are lists of names, not filters', () => {
    expect(parseQuery('columns=a,b&on_conflict=id')).toEqual({
      ...EMPTY_QUERY,
      columns: ['a', 'b'],
      onConflict: ['id'],
    });
  });

  it('columns= takes quoted names and spaces, and names each once', () => {
    expect(parseQuery('columns="a b", c ,a&on_conflict="x,y"').columns).toEqual(['a b', 'c', 'a']);
    expect(parseQuery('columns=a,a,b').columns).toEqual(['a', 'b']);
    expect(parseQuery('on_conflict="x,y"').onConflict).toEqual(['x,y']);
  });

  it('a malformed columns= or on_conflict= is a parse error that says where', () => {
    expectSyntaxError(() => parseQuery('columns=a,,b'), { key: 'columns', value: 'a,,b', at: 2 });
    expectSyntaxError(() => parseQuery('on_conflict=a;b'), { key: 'on_conflict', value: 'a;b', at: 1 });
  });
});

// =============================================================================================
// 2. Filters: operators
// =============================================================================================

describe('filters: every operator', () => {
  const QUANT: CompareOperator[] = ['eq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'match', 'imatch'];
  const SIMPLE: CompareOperator[] = ['neq', 'isdistinct', 'cs', 'cd', 'ov'];
  const RANGE: CompareOperator[] = ['sl', 'sr', 'nxr', 'nxl', 'adj'];
  const FTS: SearchOperator[] = ['fts', 'plfts', 'phfts', 'wfts'];

  it.each(QUANT)('%s.value', (op) => {
    expect(parseFilterValue('col', `${op}.abc`)).toEqual({ negated: false, operation: quant(op, 'abc') });
  });

  it.each(QUANT)('not.%s.value', (op) => {
    expect(parseFilterValue('col', `not.${op}.abc`)).toEqual({ negated: true, operation: quant(op, 'abc') });
  });

  it.each(QUANT)('%s(any).{a,b} and %s(all)', (op) => {
    expect(parseFilterValue('col', `${op}(any).{a,b}`)).toEqual({
      negated: false,
      operation: quant(op, '{a,b}', 'any'),
    });
    expect(parseFilterValue('col', `${op}(all).{a,b}`)).toEqual({
      negated: false,
      operation: quant(op, '{a,b}', 'all'),
    });
  });

  it.each(QUANT)('not.%s(any)', (op) => {
    expect(parseFilterValue('col', `not.${op}(any).{1,2}`)).toEqual({
      negated: true,
      operation: quant(op, '{1,2}', 'any'),
    });
  });

  it.each(SIMPLE)('%s.value', (op) => {
    expect(parseFilterValue('col', `${op}.{1,2}`)).toEqual({ negated: false, operation: simple(op, '{1,2}') });
  });

  it.each(SIMPLE)('not.%s.value', (op) => {
    expect(parseFilterValue('col', `not.${op}.[1,3]`)).toEqual({ negated: true, operation: simple(op, '[1,3]') });
  });

  it.each(RANGE)('%s, a range operator, takes a range literal', (op) => {
    expect(parseFilterValue('col', `${op}.[1,3)`)).toEqual({ negated: false, operation: simple(op, '[1,3)') });
  });

  it.each(['neq', 'isdistinct', 'cs', 'cd', 'ov'])(
    '%s(any) is an error: only eq gt gte lt lte like ilike match imatch take a quantifier',
    (op) => {
      expectSyntaxError(() => parseQuery(`col=${op}(any).{1,2}`), { key: 'col', value: `${op}(any).{1,2}` });
    },
  );

  it.each(FTS)('%s.value (no language)', (op) => {
    expect(parseFilterValue('tsv', `${op}.cat`)).toEqual({ negated: false, operation: fts(op, 'cat') });
  });

  it.each(FTS)('%s(english).value', (op) => {
    expect(parseFilterValue('tsv', `${op}(english).fat cats`)).toEqual({
      negated: false,
      operation: fts(op, 'fat cats', 'english'),
    });
  });

  it.each(FTS)('not.%s(french).value', (op) => {
    expect(parseFilterValue('tsv', `not.${op}(french).amusant`)).toEqual({
      negated: true,
      operation: fts(op, 'amusant', 'french'),
    });
  });

  it('fts with an empty language fts().x is an error', () => {
    expectSyntaxError(() => parseQuery('tsv=fts().x'), { key: 'tsv', value: 'fts().x' });
  });

  it.each([
    'data->>a->b=eq.1',
    'data->>a->>b=eq.1',
    'or=(data->>a->b.eq.1)',
    'select=data->>a->>b',
    'order=data->>a->b',
  ])('%s is an error: ->> ends a JSON path', (query) => {
    expect(() => parseQuery(query)).toThrow(/expected the end of the JSON path after a "->>" step, found "-"/);
  });

  it('fts with an unclosed language is an error', () => {
    expectSyntaxError(() => parseQuery('tsv=fts(english.x'), { key: 'tsv', value: 'fts(english.x' });
  });

  it('in.(1,3,5)', () => {
    expect(parseFilterValue('id', 'in.(1,3,5)')).toEqual({ negated: false, operation: inList('1', '3', '5') });
  });

  it('not.in.(1,2)', () => {
    expect(parseFilterValue('id', 'not.in.(1,2)')).toEqual({ negated: true, operation: inList('1', '2') });
  });

  it.each([
    ['null', 'null'],
    ['not_null', 'not_null'],
    ['true', 'true'],
    ['false', 'false'],
    ['unknown', 'unknown'],
  ] as const)('is.%s', (raw, value) => {
    expect(parseFilterValue('a', `is.${raw}`)).toEqual({ negated: false, operation: { kind: 'is', value } });
  });

  it.each([
    ['NULL', 'null'],
    ['Null', 'null'],
    ['NoT_NuLl', 'not_null'],
    ['NOT_NULL', 'not_null'],
    ['TRUE', 'true'],
    ['False', 'false'],
    ['UnKnOwN', 'unknown'],
  ] as const)('is values are case-insensitive: is.%s', (raw, value) => {
    expect(parseFilterValue('a', `is.${raw}`)).toEqual({ negated: false, operation: { kind: 'is', value } });
  });

  it('not.is.null', () => {
    expect(parseFilterValue('a', 'not.is.null')).toEqual({ negated: true, operation: { kind: 'is', value: 'null' } });
  });

  it.each(['maybe', '', '1', 'nil', 'notnull'])('is.%s is an error', (raw) => {
    expectSyntaxError(() => parseQuery(`a=is.${raw}`), { key: 'a', value: `is.${raw}`, at: 3 });
  });

  it('isdistinct is a simple operator and not.isdistinct is null-safe equality', () => {
    expect(parseFilterValue('a', 'isdistinct.2')).toEqual({ negated: false, operation: simple('isdistinct', '2') });
    expect(parseFilterValue('a', 'not.isdistinct.2')).toEqual({ negated: true, operation: simple('isdistinct', '2') });
  });

  it('examples from the PostgREST test suite', () => {
    expect(parseQuery('k=like.*yx').where).toEqual([filter('k', quant('like', '*yx'))]);
    expect(parseQuery('k=imatch..*YY.*').where).toEqual([filter('k', quant('imatch', '.*YY.*'))]);
    expect(parseQuery('arr_data=cs.{2}').where).toEqual([filter('arr_data', simple('cs', '{2}'))]);
    expect(parseQuery('id=gt(all).{4,3}').where).toEqual([filter('id', quant('gt', '{4,3}', 'all'))]);
    expect(parseQuery('body=like(any).{%25plan%25,%25brain%25}').where).toEqual([
      filter('body', quant('like', '{%plan%,%brain%}', 'any')),
    ]);
    expect(parseQuery('last_name=like(all).{O*,*n}').where).toEqual([
      filter('last_name', quant('like', '{O*,*n}', 'all')),
    ]);
    expect(parseQuery('a=is.not_null').where).toEqual([filter('a', { kind: 'is', value: 'not_null' })]);
    expect(parseQuery('period=ov.[2017-01-01,2017-06-30]').where).toEqual([
      filter('period', simple('ov', '[2017-01-01,2017-06-30]')),
    ]);
    expect(parseQuery('data=cs.%7B%22a%22:1%7D').where).toEqual([filter('data', simple('cs', '{"a":1}'))]);
  });
});

describe('filters: values taken verbatim at the top level', () => {
  it('name=eq."a,b" keeps the quotes', () => {
    expect(only('name=eq."a,b"')).toEqual(filter('name', quant('eq', '"a,b"')));
  });

  it('dots, parens and commas in a value are part of it', () => {
    expect(only('name=eq.a.b.c')).toEqual(filter('name', quant('eq', 'a.b.c')));
    expect(only('name=eq.(x,y)')).toEqual(filter('name', quant('eq', '(x,y)')));
    expect(only('name=neq.a,b)')).toEqual(filter('name', simple('neq', 'a,b)')));
  });

  it('backslashes are not escapes at the top level', () => {
    expect(only('name=eq.a%5C%22b')).toEqual(filter('name', quant('eq', 'a\\"b')));
  });

  it('eq. with nothing after compares with the empty string', () => {
    expect(only('name=eq.')).toEqual(filter('name', quant('eq', '')));
  });

  it('eq.null is the string "null", not IS NULL', () => {
    expect(only('name=eq.null')).toEqual(filter('name', quant('eq', 'null')));
  });

  it('like keeps "*" in the parsed value (the wildcard translation is not a parse concern)', () => {
    expect(only('name=ilike.*john*')).toEqual(filter('name', quant('ilike', '*john*')));
  });

  it('a value that looks like an operator is still just the value', () => {
    expect(only('name=eq.not.eq.1')).toEqual(filter('name', quant('eq', 'not.eq.1')));
  });
});

describe('filters: in lists', () => {
  it('quoted elements may hold "," and ")"', () => {
    expect(parseFilterValue('name', 'in.("Hebdon, John","Williams, Mary")').operation).toEqual(
      inList('Hebdon, John', 'Williams, Mary'),
    );
    expect(parseFilterValue('name', 'in.("a)b",c)').operation).toEqual(inList('a)b', 'c'));
  });

  it('inside quotes, \\" and \\\\ are escapes', () => {
    expect(parseFilterValue('name', 'in.("Quote:\\"","Back\\\\")').operation).toEqual(inList('Quote:"', 'Back\\'));
  });

  it('inside quotes, any other \\x stands for x', () => {
    expect(parseFilterValue('name', 'in.("a\\bc")').operation).toEqual(inList('abc'));
  });

  it('unquoted elements keep " and \\ literally', () => {
    expect(parseFilterValue('name', 'in.(Double"Quote")').operation).toEqual(inList('Double"Quote"'));
    expect(parseFilterValue('name', 'in.(back\\slash)').operation).toEqual(inList('back\\slash'));
  });

  it('a quoted empty string alone is a one-element list, not the empty list', () => {
    expect(parseFilterValue('name', 'in.("")').operation).toEqual(inList(''));
  });

  it('a quoted empty string among others is an element', () => {
    expect(parseFilterValue('name', 'in.("",a)').operation).toEqual(inList('', 'a'));
  });

  it('in.() is the empty list', () => {
    expect(parseFilterValue('id', 'in.()')).toEqual({ negated: false, operation: inList() });
  });

  it('in.( ) (only whitespace) is the empty list', () => {
    expect(parseFilterValue('id', 'in.( )')).toEqual({ negated: false, operation: inList() });
  });

  it('not.in.() is the negated empty list', () => {
    expect(parseFilterValue('id', 'not.in.()')).toEqual({ negated: true, operation: inList() });
  });

  it('whitespace around the parens is allowed', () => {
    const { operation } = parseFilterValue('id', 'in. (1,2) ');
    expect(operation.kind).toBe('in');
    if (operation.kind !== 'in') return;
    expect(operation.values.map((v) => v.trim())).toEqual(['1', '2']);
  });

  it('whitespace around elements (numbers) parses', () => {
    const { operation } = parseFilterValue('id', 'in.( 1 , 2 , 3 )');
    expect(operation.kind).toBe('in');
    if (operation.kind !== 'in') return;
    expect(operation.values.map((v) => v.trim())).toEqual(['1', '2', '3']);
  });

  it('an empty element between commas is kept as ""', () => {
    expect(parseFilterValue('id', 'in.(1,,3)').operation).toEqual(inList('1', '', '3'));
  });

  it('in.( ,3) gives an empty first element', () => {
    const { operation } = parseFilterValue('id', 'in.( ,3)');
    expect(operation.kind).toBe('in');
    if (operation.kind !== 'in') return;
    expect(operation.values.map((v) => v.trim())).toEqual(['', '3']);
  });

  it('"(" is allowed unquoted inside an element', () => {
    expect(parseFilterValue('name', 'in.(a(b,c)').operation).toEqual(inList('a(b', 'c'));
  });

  it('in without parens is an error', () => {
    expectSyntaxError(() => parseQuery('id=in.1,2'), { key: 'id', value: 'in.1,2', at: 3 });
  });

  it('an unclosed list is an error', () => {
    expectSyntaxError(() => parseQuery('id=in.(1,2'), { key: 'id', value: 'in.(1,2' });
  });

  it('an unclosed quote in a list is an error', () => {
    expectSyntaxError(() => parseQuery('name=in.("a,b)'), { key: 'name', value: 'in.("a,b)' });
  });

  it('in(any) is an error', () => {
    expectSyntaxError(() => parseQuery('id=in(any).(1,2)'), { key: 'id', value: 'in(any).(1,2)' });
  });
});

describe('filters: malformed values', () => {
  it('a value without an operator (id=5) is an error pointing at column 1', () => {
    expectSyntaxError(() => parseQuery('id=5'), { key: 'id', value: '5', at: 0 });
  });

  it('an empty value (id=) is an error', () => {
    expectSyntaxError(() => parseQuery('id='), { key: 'id', value: '', at: 0 });
  });

  it('an unknown operator (id=foo.5) is an error', () => {
    expectSyntaxError(() => parseQuery('id=foo.5'), { key: 'id', value: 'foo.5', at: 0 });
  });

  it('an operator without "." and value (id=eq) is an error', () => {
    expectSyntaxError(() => parseQuery('id=eq'), { key: 'id', value: 'eq' });
  });

  it('operators are case-sensitive (id=EQ.1)', () => {
    expectSyntaxError(() => parseQuery('id=EQ.1'), { key: 'id', value: 'EQ.1', at: 0 });
  });

  it('not.not.eq.1 is an error: "not." only once', () => {
    expectSyntaxError(() => parseQuery('id=not.not.eq.1'), { key: 'id', value: 'not.not.eq.1', at: 4 });
  });

  it('not. alone or not.5 is an error', () => {
    expectSyntaxError(() => parseQuery('id=not.'), { key: 'id', value: 'not.', at: 4 });
    expectSyntaxError(() => parseQuery('id=not.5'), { key: 'id', value: 'not.5', at: 4 });
  });

  it('an unknown quantifier eq(some).1 is an error', () => {
    expectSyntaxError(() => parseQuery('id=eq(some).1'), { key: 'id', value: 'eq(some).1' });
  });

  it('a quantifier without "." is an error', () => {
    expectSyntaxError(() => parseQuery('id=eq(any){1,2}'), { key: 'id', value: 'eq(any){1,2}' });
  });

  it('parseFilterValue reports errors the same way', () => {
    expectSyntaxError(() => parseFilterValue('price', 'bogus.1'), { key: 'price', value: 'bogus.1', at: 0 });
  });
});

describe('filters: fields in keys', () => {
  it('several filters on one field are kept separately, in order', () => {
    expect(parseQuery('id=gt.0&id=lt.6').where).toEqual([
      filter('id', quant('gt', '0')),
      filter('id', quant('lt', '6')),
    ]);
  });

  it('filters on several fields', () => {
    expect(parseQuery('a=eq.1&b=neq.2&c=is.null').where).toEqual([
      filter('a', quant('eq', '1')),
      filter('b', simple('neq', '2')),
      filter('c', { kind: 'is', value: 'null' }),
    ]);
  });

  it('a quoted field name may hold reserved characters', () => {
    expect(only('"information.cpe"=like.*MS*')).toEqual(filter('information.cpe', quant('like', '*MS*')));
    expect(only('"a,b:c"=eq.1')).toEqual(filter('a,b:c', quant('eq', '1')));
  });

  it('quoting lets a column named like a reserved parameter be filtered', () => {
    expect(only('"limit"=eq.3')).toEqual(filter('limit', quant('eq', '3')));
    expect(only('"order"=eq.x')).toEqual(filter('order', quant('eq', 'x')));
    expect(only('"select"=eq.y')).toEqual(filter('select', quant('eq', 'y')));
    expect(only('"or"=eq.z')).toEqual(filter('or', quant('eq', 'z')));
  });

  it('a quoted field name may contain an escaped quote', () => {
    expect(only('"a\\"b"=eq.1')).toEqual(filter('a"b', quant('eq', '1')));
  });

  it('names may contain "-", "$", digits and "_"', () => {
    expect(only('identifier-with-dashes=eq.1')).toEqual(filter('identifier-with-dashes', quant('eq', '1')));
    expect(only('$col_2=eq.1')).toEqual(filter('$col_2', quant('eq', '1')));
  });

  it('JSON path data->a->>b', () => {
    expect(only('data->a->>b=eq.baz')).toEqual(filter(field('data', arrow('a'), arrow2('b')), quant('eq', 'baz')));
  });

  it('JSON path with an index data->0 (a number)', () => {
    expect(only('data->0=eq.1')).toEqual(filter(field('data', arrow(0)), quant('eq', '1')));
  });

  it('JSON path with a negative index data->-1', () => {
    expect(only('data->-1=eq.1')).toEqual(filter(field('data', arrow(-1)), quant('eq', '1')));
    expect(only('data->>-2=eq.1')).toEqual(filter(field('data', arrow2(-2)), quant('eq', '1')));
  });

  it('JSON path mixing keys and indexes', () => {
    expect(only('data->items->0->>name=eq.x')).toEqual(
      filter(field('data', arrow('items'), arrow(0), arrow2('name')), quant('eq', 'x')),
    );
  });

  it('JSON path keys may be quoted or hold "-"', () => {
    expect(only('data->"a.b"->>c=eq.1')).toEqual(filter(field('data', arrow('a.b'), arrow2('c')), quant('eq', '1')));
    expect(only('data->a-b->>c=eq.1')).toEqual(filter(field('data', arrow('a-b'), arrow2('c')), quant('eq', '1')));
  });

  it('a JSON path on a key with a JSON operator filter', () => {
    expect(only('data->tags=cs.["a"]')).toEqual(filter(field('data', arrow('tags')), simple('cs', '["a"]')));
  });

  // Errors in the key: the message shows the key (value '' below means "not required").
  it('a malformed negative index data->>-78xy is an error (a JSON key cannot start with "-")', () => {
    expectSyntaxError(() => parseQuery('data->>-78xy=eq.1'), { key: 'data->>-78xy', value: '' });
  });

  it('a cast in a filter key is a syntax error (casts are not allowed in filters)', () => {
    expectSyntaxError(() => parseQuery('id::text=eq.1'), { key: 'id::text', value: '' });
  });

  it('an empty key is an error', () => {
    expectSyntaxError(() => parseQuery('=eq.1'), { key: '', value: '' });
  });

  it.each([
    ['tasks.name=eq.x', 'tasks', 'name'],
    ['actors.first_name=like.*Tom*', 'actors', 'first_name'],
    ['clients.projects.id=eq.1', 'clients.projects', 'id'],
    ['deal.data->>x=eq.1', 'deal', 'data'],
  ])('an embed-prefixed filter (%s) lands in that embed', (raw, path, name) => {
    const query = parseQuery(raw);
    expect(query.where).toEqual([]);
    const level = query.embedded.get(path)!;
    expect(level.where).toHaveLength(1);
    expect(level.where[0]).toMatchObject({ kind: 'filter', field: { name } });
  });
});

// =============================================================================================
// 3. Logic trees
// =============================================================================================

describe('logic trees (or= / and=)', () => {
  it('or=(a.eq.1,b.gt.2)', () => {
    expect(only('or=(a.eq.1,b.gt.2)')).toEqual(or([filter('a', quant('eq', '1')), filter('b', quant('gt', '2'))]));
  });

  it('and=(a.gte.0,a.lte.100)', () => {
    expect(only('and=(a.gte.0,a.lte.100)')).toEqual(
      and([filter('a', quant('gte', '0')), filter('a', quant('lte', '100'))]),
    );
  });

  it('a single-item tree', () => {
    expect(only('or=(a.eq.1)')).toEqual(or([filter('a', quant('eq', '1'))]));
  });

  it('not.or= negates the whole tree', () => {
    expect(only('not.or=(a.eq.1,b.eq.2)')).toEqual(
      or([filter('a', quant('eq', '1')), filter('b', quant('eq', '2'))], true),
    );
  });

  it('not.and= negates the whole tree', () => {
    expect(only('not.and=(a.gte.0,a.lte.100)')).toEqual(
      and([filter('a', quant('gte', '0')), filter('a', quant('lte', '100'))], true),
    );
  });

  it('nested not.and(...) inside or', () => {
    expect(only('or=(age.eq.14,not.and(age.gte.11,age.lte.17))')).toEqual(
      or([
        filter('age', quant('eq', '14')),
        and([filter('age', quant('gte', '11')), filter('age', quant('lte', '17'))], true),
      ]),
    );
  });

  it('deep nesting or(... and(... or(...)))', () => {
    expect(only('and=(or(a.eq.1,and(b.eq.2,c.is.null)),not.or(d.neq.4,e.lt.5))')).toEqual(
      and([
        or([
          filter('a', quant('eq', '1')),
          and([filter('b', quant('eq', '2')), filter('c', { kind: 'is', value: 'null' })]),
        ]),
        or([filter('d', simple('neq', '4')), filter('e', quant('lt', '5'))], true),
      ]),
    );
  });

  it("PostgREST's example of a nested logic tree: or=(a.eq.1,and(b.gt.2,c.is.null))", () => {
    expect(only('or=(a.eq.1,and(b.gt.2,c.is.null))')).toEqual(
      or([
        filter('a', quant('eq', '1')),
        and([filter('b', quant('gt', '2')), filter('c', { kind: 'is', value: 'null' })]),
      ]),
    );
  });

  it('not. on items inside a tree', () => {
    expect(only('or=(a.not.eq.1,b.not.is.null)')).toEqual(
      or([filter('a', quant('eq', '1'), true), filter('b', { kind: 'is', value: 'null' }, true)]),
    );
  });

  it('quoted values may hold "," and ")" and lose their quotes', () => {
    expect(only('or=(tags.cs."{a,b}",name.eq."Hebdon, John")')).toEqual(
      or([filter('tags', simple('cs', '{a,b}')), filter('name', quant('eq', 'Hebdon, John'))]),
    );
  });

  it('quoted values in a tree take \\ escapes', () => {
    expect(only('or=(name.eq."say \\"hi\\"",name.eq."back\\\\")')).toEqual(
      or([filter('name', quant('eq', 'say "hi"')), filter('name', quant('eq', 'back\\'))]),
    );
  });

  it('a quoted value may hold "."', () => {
    expect(only('or=(name.eq."a.b",name.eq.c)')).toEqual(
      or([filter('name', quant('eq', 'a.b')), filter('name', quant('eq', 'c'))]),
    );
  });

  it('"(" is allowed unquoted in a tree value', () => {
    expect(only('or=(name.eq.a(b,id.eq.1)')).toEqual(
      or([filter('name', quant('eq', 'a(b')), filter('id', quant('eq', '1'))]),
    );
  });

  it('{...} literals are kept whole, commas included', () => {
    expect(only('or=(tags.cs.{a,b},tags.ov.{c})')).toEqual(
      or([filter('tags', simple('cs', '{a,b}')), filter('tags', simple('ov', '{c}'))]),
    );
  });

  it('{...} JSON literals are kept whole', () => {
    expect(only('or=(data.cs.{"a":1,"b":2},id.eq.1)')).toEqual(
      or([filter('data', simple('cs', '{"a":1,"b":2}')), filter('id', quant('eq', '1'))]),
    );
  });

  it('(any)/(all) inside a tree with {...}', () => {
    expect(only('or=(id.eq(any).{1,2},name.like(all).{a*,*b})')).toEqual(
      or([filter('id', quant('eq', '{1,2}', 'any')), filter('name', quant('like', '{a*,*b}', 'all'))]),
    );
  });

  it('in lists inside a tree are nested parens', () => {
    expect(only('or=(id.in.(1,2),id.in.(3,4))')).toEqual(
      or([filter('id', inList('1', '2')), filter('id', inList('3', '4'))]),
    );
  });

  it('in lists inside a tree with quoted elements', () => {
    expect(only('or=(name.in.("a,b","c)"),id.not.in.(1))')).toEqual(
      or([filter('name', inList('a,b', 'c)')), filter('id', inList('1'), true)]),
    );
  });

  it('is values inside a tree are case-insensitive', () => {
    expect(only('or=(a.is.NULL,b.is.True)')).toEqual(
      or([filter('a', { kind: 'is', value: 'null' }), filter('b', { kind: 'is', value: 'true' })]),
    );
  });

  it('fts with a language inside a tree', () => {
    expect(only('or=(tsv.fts(english).cat,tsv.not.plfts.dog)')).toEqual(
      or([filter('tsv', fts('fts', 'cat', 'english')), filter('tsv', fts('plfts', 'dog'), true)]),
    );
  });

  it('JSON paths and quoted names inside a tree', () => {
    expect(only('or=(data->>a.eq.1,data->0.eq.2,"my.col".eq.3)')).toEqual(
      or([
        filter(field('data', arrow2('a')), quant('eq', '1')),
        filter(field('data', arrow(0)), quant('eq', '2')),
        filter('my.col', quant('eq', '3')),
      ]),
    );
  });

  it('"+" decodes to a space inside a tree value', () => {
    expect(only('or=(name.eq."John+Smith",name.eq.x)')).toEqual(
      or([filter('name', quant('eq', 'John Smith')), filter('name', quant('eq', 'x'))]),
    );
  });

  it('whitespace around items and parens is allowed', () => {
    const tree = parseLogicTree('and', '( and ( id.in.( 1, 2, 3 ) , id.eq.3 ) , or ( id.eq.2, id.eq.3 ) )');
    // Trailing spaces in unquoted values are harmless for numbers; compare trimmed.
    const trim = (c: Condition): Condition => {
      if (c.kind === 'logic') return { ...c, children: c.children.map(trim) };
      const op = c.operation;
      if (op.kind === 'in') return { ...c, operation: { ...op, values: op.values.map((v) => v.trim()) } };
      if (op.kind === 'is') return c;
      return { ...c, operation: { ...op, value: op.value.trim() } };
    };
    expect(trim(tree)).toEqual(
      and([
        and([filter('id', inList('1', '2', '3')), filter('id', quant('eq', '3'))]),
        or([filter('id', quant('eq', '2')), filter('id', quant('eq', '3'))]),
      ]),
    );
  });

  it('whitespace via "+" in the URL around items', () => {
    const node = only('or=(+a.eq.1+,+b.eq.2)');
    expect(node.kind).toBe('logic');
    if (node.kind !== 'logic') return;
    expect(node.children).toHaveLength(2);
    const [a, b] = node.children;
    expect(a).toMatchObject({ kind: 'filter', field: field('a'), operation: { kind: 'compare', op: 'eq' } });
    expect(b).toEqual(filter('b', quant('eq', '2')));
  });

  it('parseLogicTree with not.or', () => {
    expect(parseLogicTree('not.or', '(a.eq.1,b.eq.2)')).toEqual(
      or([filter('a', quant('eq', '1')), filter('b', quant('eq', '2'))], true),
    );
  });

  it('several trees are kept separately (ANDed)', () => {
    expect(parseQuery('or=(a.eq.1,a.eq.2)&or=(b.eq.1,b.eq.2)').where).toEqual([
      or([filter('a', quant('eq', '1')), filter('a', quant('eq', '2'))]),
      or([filter('b', quant('eq', '1')), filter('b', quant('eq', '2'))]),
    ]);
  });

  it('top-level filters and trees are both in where', () => {
    const where = parseQuery('grade=gte.90&or=(age.lt.18,age.gt.21)').where;
    expect(where).toHaveLength(2);
    expect(where).toEqual(
      expect.arrayContaining([
        filter('grade', quant('gte', '90')),
        or([filter('age', quant('lt', '18')), filter('age', quant('gt', '21'))]),
      ]),
    );
  });

  describe('errors', () => {
    it('or=() is an error pointing at ")"', () => {
      expectSyntaxError(() => parseQuery('or=()'), { key: 'or', value: '()', at: 1 });
    });

    it('and=() is an error', () => {
      expectSyntaxError(() => parseQuery('and=()'), { key: 'and', value: '()', at: 1 });
    });

    it('or= (empty) is an error', () => {
      expectSyntaxError(() => parseQuery('or='), { key: 'or', value: '', at: 0 });
    });

    it('a tree without parens is an error', () => {
      expectSyntaxError(() => parseQuery('or=a.eq.1'), { key: 'or', value: 'a.eq.1', at: 0 });
    });

    it('an unclosed tree is an error', () => {
      expectSyntaxError(() => parseQuery('or=(a.eq.1,b.eq.2'), { key: 'or', value: '(a.eq.1,b.eq.2' });
    });

    it('a trailing comma is an error', () => {
      expectSyntaxError(() => parseQuery('or=(a.eq.1,)'), { key: 'or', value: '(a.eq.1,)', at: 8 });
    });

    it('an item without an operator is an error', () => {
      expectSyntaxError(() => parseQuery('or=(a,b.eq.1)'), { key: 'or', value: '(a,b.eq.1)' });
    });

    it('an unknown operator in a tree is an error', () => {
      expectSyntaxError(() => parseQuery('or=(a.foo.1)'), { key: 'or', value: '(a.foo.1)' });
    });

    it('in without parens inside a tree points at the value', () => {
      expectSyntaxError(() => parseQuery('or=(id.in.1,2,id.eq.3)'), { key: 'or', value: '(id.in.1,2,id.eq.3)', at: 7 });
    });

    it('an unknown logic operator (xor) inside a tree is an error', () => {
      expectSyntaxError(() => parseQuery('or=(id.eq.1,not.xor(id.eq.2,id.eq.3))'), {
        key: 'or',
        value: '(id.eq.1,not.xor(id.eq.2,id.eq.3))',
      });
    });

    it('an empty nested group is an error', () => {
      expectSyntaxError(() => parseQuery('or=(a.eq.1,and())'), { key: 'or', value: '(a.eq.1,and())', at: 12 });
    });

    it('an unclosed quote in a tree is an error', () => {
      expectSyntaxError(() => parseQuery('or=(name.eq."abc,id.eq.1)'), { key: 'or', value: '(name.eq."abc,id.eq.1)' });
    });

    it('parseLogicTree reports errors the same way', () => {
      expectSyntaxError(() => parseLogicTree('or', '()'), { key: 'or', value: '()', at: 1 });
    });

    it("an embed-prefixed tree (tasks.or=) is the embed's", () => {
      const query = parseQuery('tasks.or=(a.eq.1,b.eq.2)');
      expect(query.where).toEqual([]);
      expect(query.embedded.get('tasks')!.where).toEqual([
        or([filter('a', simple('eq', '1')), filter('b', simple('eq', '2'))]),
      ]);
    });

    it('an embed-prefixed negated tree (tasks.not.and=) is negated in the embed', () => {
      const query = parseQuery('tasks.not.and=(a.eq.1,b.eq.2)');
      expect(query.embedded.get('tasks')!.where).toEqual([
        and([filter('a', simple('eq', '1')), filter('b', simple('eq', '2'))], true),
      ]);
    });

    it('an error in an embed-prefixed tree names the parameter as written', () => {
      expectSyntaxError(() => parseQuery('tasks.or=(a.eq.1'), { key: 'tasks.or', value: '(a.eq.1' });
    });
  });
});

// =============================================================================================
// 4. select
// =============================================================================================

describe('select', () => {
  it('no select means the default (all fields)', () => {
    expect(parseQuery('id=eq.1').select).toBeNull();
  });

  it('empty select= means all fields', () => {
    const { select } = parseQuery('select=');
    expect(select === null || JSON.stringify(select) === JSON.stringify([{ kind: 'star' }])).toBe(true);
  });

  it('select=*', () => {
    expect(parseQuery('select=*').select).toEqual([{ kind: 'star' }]);
  });

  it('select=id,name', () => {
    expect(parseQuery('select=id,name').select).toEqual([col('id'), col('name')]);
  });

  it('star with fields', () => {
    expect(parseSelect('*,name')).toEqual([{ kind: 'star' }, col('name')]);
    expect(parseSelect('id,*')).toEqual([col('id'), { kind: 'star' }]);
  });

  it('alias: fullName:full_name', () => {
    expect(parseSelect('fullName:full_name')).toEqual([col('full_name', 'fullName')]);
  });

  it('cast: id::text', () => {
    expect(parseSelect('id::text')).toEqual([col('id', null, 'text')]);
  });

  it('alias and cast: myId:id::text', () => {
    expect(parseSelect('myId:id::text')).toEqual([col('id', 'myId', 'text')]);
  });

  it('a cast whose type holds a space (double precision)', () => {
    expect(parseQuery('select=amount::double+precision').select).toEqual([col('amount', null, 'double precision')]);
  });

  it('JSON path: settings->foo->>bar', () => {
    expect(parseSelect('settings->foo->>bar')).toEqual([col('settings', null, null, arrow('foo'), arrow2('bar'))]);
  });

  it('JSON path with indexes and a cast: data->0->>1::int', () => {
    expect(parseSelect('data->0->>1::int')).toEqual([col('data', null, 'int', arrow(0), arrow2(1))]);
  });

  it('JSON path with a negative index: data->-1', () => {
    expect(parseSelect('data->-1')).toEqual([col('data', null, null, arrow(-1))]);
  });

  it('alias, JSON path and cast together', () => {
    expect(parseSelect('x:data->a->>b::text')).toEqual([col('data', 'x', 'text', arrow('a'), arrow2('b'))]);
  });

  it('quoted field names', () => {
    expect(parseSelect('"a.b","c,d"')).toEqual([col('a.b'), col('c,d')]);
  });

  it('whitespace around items is trimmed', () => {
    expect(parseSelect(' id , name ')).toEqual([col('id'), col('name')]);
    expect(parseQuery('select=id,+name+,%20email').select).toEqual([col('id'), col('name'), col('email')]);
  });

  it('whitespace around an aliased, cast item is trimmed', () => {
    expect(parseSelect(' a:id::text , b ')).toEqual([col('id', 'a', 'text'), col('b')]);
  });

  it('field names with dashes', () => {
    expect(parseSelect('identifier-with-dashes')).toEqual([col('identifier-with-dashes')]);
  });

  describe('errors', () => {
    it('a trailing comma', () => {
      expectSyntaxError(() => parseQuery('select=id,'), { key: 'select', value: 'id,', at: 3 });
    });

    it('an empty item between commas', () => {
      expectSyntaxError(() => parseQuery('select=id,,name'), { key: 'select', value: 'id,,name', at: 3 });
    });

    it('a cast without a type (name::)', () => {
      expectSyntaxError(() => parseQuery('select=name::'), { key: 'select', value: 'name::', at: 6 });
    });

    it('an embed hint without its parentheses (name!hint)', () => {
      expectSyntaxError(() => parseQuery('select=name!hint'), { key: 'select', value: 'name!hint', at: 9 });
    });

    it('junk after * (*!hint)', () => {
      expectSyntaxError(() => parseQuery('select=*!hint'), { key: 'select', value: '*!hint', at: 1 });
    });

    it('a malformed negative JSON index (data->>-78xy)', () => {
      expectSyntaxError(() => parseQuery('select=data->>-78xy'), { key: 'select', value: 'data->>-78xy' });
    });

    it('an alias without a field (a:)', () => {
      expectSyntaxError(() => parseQuery('select=a:'), { key: 'select', value: 'a:', at: 2 });
    });

    it('an unclosed quoted name', () => {
      expectSyntaxError(() => parseQuery('select="abc'), { key: 'select', value: '"abc' });
    });
  });

  describe('embedding, spread and aggregates', () => {
    const embed = (relation: string, select: SelectItem[], extra: Partial<EmbedItem> = {}): SelectItem => ({
      kind: 'embed',
      relation,
      hint: null,
      join: null,
      alias: null,
      spread: false,
      select,
      ...extra,
    });
    const star: SelectItem = { kind: 'star' };

    it.each<[string, SelectItem[]]>([
      ['*,clients(*)', [star, embed('clients', [star])]],
      [
        'name,client:clients(clientId:id,name)',
        [col('name'), embed('clients', [col('id', 'clientId'), col('name')], { alias: 'client' })],
      ],
      ['*,clients!inner(*)', [star, embed('clients', [star], { join: 'inner' })]],
      ['*,clients!left(*)', [star, embed('clients', [star], { join: 'left' })]],
      ['*,clients!client_fk(name)', [star, embed('clients', [col('name')], { hint: 'client_fk' })]],
      [
        '*,clients!client_fk!inner(name)',
        [star, embed('clients', [col('name')], { hint: 'client_fk', join: 'inner' })],
      ],
      [
        '*,clients!inner!client_fk(name)',
        [star, embed('clients', [col('name')], { hint: 'client_fk', join: 'inner' })],
      ],
      ['*,clients()', [star, embed('clients', [])]],
      ['*,...clients(name)', [star, embed('clients', [col('name')], { spread: true })]],
      ['*,...clients!inner(name)', [star, embed('clients', [col('name')], { spread: true, join: 'inner' })]],
      ['id,tasks(id,subtasks(id))', [col('id'), embed('tasks', [col('id'), embed('subtasks', [col('id')])])]],
      [' id , tasks ( id ) ', [col('id'), embed('tasks', [col('id')])]],
    ])('select=%s', (value, expected) => {
      expect(parseQuery(`select=${value}`).select).toEqual(expected);
    });

    it.each<[string, SelectItem[]]>([
      ['total:amount.sum()', [{ ...col('amount', 'total'), aggregate: { fn: 'sum', cast: null } } as SelectItem]],
      ['amount.avg()', [{ ...col('amount'), aggregate: { fn: 'avg', cast: null } } as SelectItem]],
      [
        'amount::int.max()::text',
        [{ ...col('amount', null, 'int'), aggregate: { fn: 'max', cast: 'text' } } as SelectItem],
      ],
      ['count()', [{ kind: 'count', alias: null, cast: null }]],
      ['n:count()::text', [{ kind: 'count', alias: 'n', cast: 'text' }]],
      ['id,count()', [col('id'), { kind: 'count', alias: null, cast: null }]],
      ['id,tasks(count())', [col('id'), embed('tasks', [{ kind: 'count', alias: null, cast: null }])]],
    ])('aggregate select=%s', (value, expected) => {
      expect(parseQuery(`select=${value}`).select).toEqual(expected);
    });

    it.each([
      ['amount.total()', 'an aggregate function'],
      ['amount.sum(', 'an aggregate function'],
      ['clients(name', '"," or ")"'],
      ['clients!', 'a join'],
      ['clients!inner!left(*)', 'one join'],
      ['...clients', '"(" opening the embedded select'],
    ])('a malformed embed or aggregate (select=%s) says what was expected', (value, expected) => {
      const e = caught(() => parseQuery(`select=${value}`));
      expect(e.code).toBe('INVALID_QUERY');
      expect(e.message).toContain(`select=${value}`);
      expect(e.message).toContain(expected);
    });

    it('embeds nest at most 16 deep', () => {
      const deep = (n: number) => `${'a('.repeat(n)}id${')'.repeat(n)}`;
      expect(() => parseQuery(`select=${deep(16)}`)).not.toThrow();
      expect(caught(() => parseQuery(`select=${deep(17)}`)).message).toContain('nest at most 16');
    });
  });
});

// =============================================================================================
// 5. order
// =============================================================================================

describe('order', () => {
  it('no order means no ordering', () => {
    expect(parseQuery('id=eq.1').order).toEqual([]);
  });

  it('a bare field (default direction and null placement)', () => {
    expect(parseQuery('order=id').order).toEqual([term('id')]);
  });

  it('order=age.desc,height.asc', () => {
    expect(parseQuery('order=age.desc,height.asc').order).toEqual([term('age', 'desc'), term('height', 'asc')]);
  });

  it('order=age.nullsfirst (nulls without direction)', () => {
    expect(parseOrder('age.nullsfirst')).toEqual([term('age', null, 'first')]);
  });

  it('direction and nulls: a.desc.nullslast,b,c.asc.nullsfirst', () => {
    expect(parseOrder('a.desc.nullslast,b,c.asc.nullsfirst')).toEqual([
      term('a', 'desc', 'last'),
      term('b'),
      term('c', 'asc', 'first'),
    ]);
  });

  it('JSON paths: json_col->>key.desc and data->0.asc', () => {
    expect(parseOrder('json_col->>key.desc')).toEqual([term(field('json_col', arrow2('key')), 'desc')]);
    expect(parseOrder('data->0.asc')).toEqual([term(field('data', arrow(0)), 'asc')]);
    expect(parseOrder('json_col->key.asc.nullslast')).toEqual([term(field('json_col', arrow('key')), 'asc', 'last')]);
  });

  it('quoted field names', () => {
    expect(parseOrder('"a.b".desc,"c,d"')).toEqual([term('a.b', 'desc'), term('c,d')]);
  });

  it('whitespace around terms is allowed', () => {
    expect(parseOrder(' id.desc , name ')).toEqual([term('id', 'desc'), term('name')]);
    expect(parseQuery('order=id.desc,+name').order).toEqual([term('id', 'desc'), term('name')]);
  });

  describe('errors', () => {
    it('id.asc.nullslasttt points at the junk', () => {
      expectSyntaxError(() => parseQuery('order=id.asc.nullslasttt'), {
        key: 'order',
        value: 'id.asc.nullslasttt',
        at: 16,
      });
    });

    it('id.nullslasttt points at the junk', () => {
      expectSyntaxError(() => parseQuery('order=id.nullslasttt'), { key: 'order', value: 'id.nullslasttt', at: 12 });
    });

    it('id.descc points at the junk', () => {
      expectSyntaxError(() => parseQuery('order=id.descc'), { key: 'order', value: 'id.descc', at: 7 });
    });

    it.each([
      'id.ac',
      'id.nulsfist',
      'id.smth34',
      'id.asc.nlsfst',
      'id.asc.smth34',
      'id.desc.asc',
      'id.nullsfirst.desc',
      'id.',
      'id.ASC',
    ])('order=%s', (value) => {
      expectSyntaxError(() => parseQuery(`order=${value}`), { key: 'order', value });
    });

    it('a trailing comma', () => {
      expectSyntaxError(() => parseQuery('order=id,'), { key: 'order', value: 'id,', at: 3 });
    });

    it('an empty order= is an error', () => {
      expectSyntaxError(() => parseQuery('order='), { key: 'order', value: '', at: 0 });
    });

    it('ordering by a field of an embed: clients(name).desc', () => {
      expect(parseQuery('order=clients(name).desc,id').order).toEqual([
        { ...term('name', 'desc'), relation: 'clients' },
        term('id'),
      ]);
      expectSyntaxError(() => parseQuery('order=clients(name.desc'), { key: 'order', value: 'clients(name.desc' });
    });

    it('parseOrder reports errors with position and expectation', () => {
      expectSyntaxError(() => parseOrder('id.asc.nullslasttt'), { key: 'order', value: 'id.asc.nullslasttt', at: 16 });
    });
  });
});

// =============================================================================================
// 6. limit / offset and embed-prefixed parameters
// =============================================================================================

describe('limit and offset', () => {
  it('limit=10', () => {
    expect(parseQuery('limit=10').limit).toBe(10);
  });

  it('limit=0 is valid', () => {
    expect(parseQuery('limit=0').limit).toBe(0);
  });

  it('offset=20', () => {
    expect(parseQuery('offset=20').offset).toBe(20);
  });

  it('offset=0', () => {
    expect(parseQuery('offset=0').offset).toBe(0);
  });

  it('both together', () => {
    expect(parseQuery('limit=3&offset=2')).toEqual({ ...EMPTY_QUERY, limit: 3, offset: 2 });
  });

  it('absent means null', () => {
    const q = parseQuery('id=eq.1');
    expect(q.limit).toBeNull();
    expect(q.offset).toBeNull();
  });

  it.each(['-1', 'abc', '1.5', '1e3', '0x10', '10abc', ''])(
    'limit=%s is 400 INVALID_QUERY naming limit and the value',
    (value) => {
      const e = caught(() => parseQuery(`limit=${encodeURIComponent(value)}`));
      expect(e.code).toBe('INVALID_QUERY');
      expect(e.status).toBe(400);
      expect(e.message).toContain(`(limit=${value})`);
    },
  );

  it.each(['-1', 'abc', '1.5', '2e1', ''])('offset=%s is 400 INVALID_QUERY naming offset and the value', (value) => {
    const e = caught(() => parseQuery(`offset=${value}`));
    expect(e.code).toBe('INVALID_QUERY');
    expect(e.status).toBe(400);
    expect(e.message).toContain(`(offset=${value})`);
  });

  it('limit/offset errors say where (column) and what was expected, like every other parse error', () => {
    expectSyntaxError(() => parseQuery('limit=abc'), { key: 'limit', value: 'abc', at: 0 });
    expectSyntaxError(() => parseQuery('offset=1.5'), { key: 'offset', value: '1.5' });
  });
});

describe('embed-prefixed parameters belong to their embed (the planner checks it is embedded)', () => {
  it('order, limit and offset by path', () => {
    const query = parseQuery('tasks.order=name.asc&tasks.limit=10&tasks.offset=5&clients.projects.limit=1&limit=2');
    expect(query.limit).toBe(2);
    expect(query.embedded.get('tasks')).toEqual({ where: [], order: [term('name', 'asc')], limit: 10, offset: 5 });
    expect(query.embedded.get('clients.projects')).toEqual({ where: [], order: [], limit: 1, offset: null });
  });

  it('errors name the parameter as written', () => {
    expectSyntaxError(() => parseQuery('tasks.limit=ten'), { key: 'tasks.limit', value: 'ten', at: 0 });
    expectSyntaxError(() => parseQuery('tasks.order=name.up'), { key: 'tasks.order', value: 'name.up' });
  });
});

// =============================================================================================
// 7. Prefer
// =============================================================================================

describe('Prefer', () => {
  it('missing header: nothing preferred', () => {
    expect(parsePreferences(null)).toEqual(NO_PREFS);
    expect(parsePreferences(undefined)).toEqual(NO_PREFS);
    expect(parsePreferences('')).toEqual(NO_PREFS);
  });

  it.each([
    ['return=minimal', { return: 'minimal' }],
    ['return=headers-only', { return: 'headers-only' }],
    ['return=representation', { return: 'representation' }],
    ['count=exact', { count: 'exact' }],
    ['count=planned', { count: 'planned' }],
    ['count=estimated', { count: 'estimated' }],
    ['resolution=merge-duplicates', { resolution: 'merge-duplicates' }],
    ['resolution=ignore-duplicates', { resolution: 'ignore-duplicates' }],
    ['missing=default', { missing: 'default' }],
    ['missing=null', { missing: 'null' }],
    ['handling=strict', { handling: 'strict' }],
    ['handling=lenient', { handling: 'lenient' }],
    ['tx=commit', { tx: 'commit' }],
    ['tx=rollback', { tx: 'rollback' }],
    ['max-affected=10', { maxAffected: 10 }],
    ['max-affected=0', { maxAffected: 0 }],
  ] as const)('%s', (header, expected) => {
    expect(parsePreferences(header)).toEqual({ ...NO_PREFS, ...expected });
  });

  it('several headers joined by ", " are all read', () => {
    expect(
      parsePreferences('return=representation, count=exact, resolution=merge-duplicates, missing=default'),
    ).toEqual({
      ...NO_PREFS,
      return: 'representation',
      count: 'exact',
      resolution: 'merge-duplicates',
      missing: 'default',
    });
  });

  it('comma without space and extra whitespace are fine', () => {
    expect(parsePreferences('return=representation,count=exact')).toEqual({
      ...NO_PREFS,
      return: 'representation',
      count: 'exact',
    });
    expect(parsePreferences('  return=minimal ,   count=planned  ')).toEqual({
      ...NO_PREFS,
      return: 'minimal',
      count: 'planned',
    });
  });

  it('the first occurrence of a preference wins', () => {
    expect(parsePreferences('return=minimal, return=representation').return).toBe('minimal');
    expect(parsePreferences('count=exact, count=planned').count).toBe('exact');
    expect(parsePreferences('handling=lenient, handling=strict, foo=bar').handling).toBe('lenient');
  });

  it('unknown preferences are ignored by default', () => {
    expect(parsePreferences('foo=bar, count=exact, baz')).toEqual({ ...NO_PREFS, count: 'exact' });
  });

  it('unknown values of known preferences are ignored by default', () => {
    expect(parsePreferences('return=everything, count=none')).toEqual(NO_PREFS);
  });

  it('a non-numeric max-affected is ignored by default', () => {
    expect(parsePreferences('max-affected=abc').maxAffected).toBeNull();
  });

  it('unknown preferences with handling=lenient are ignored', () => {
    expect(parsePreferences('handling=lenient, foo=bar')).toEqual({ ...NO_PREFS, handling: 'lenient' });
  });

  it('handling=strict with only known preferences is fine', () => {
    expect(parsePreferences('handling=strict, return=representation, max-affected=5')).toEqual({
      ...NO_PREFS,
      handling: 'strict',
      return: 'representation',
      maxAffected: 5,
    });
  });

  it('handling=strict with an unknown preference is 400 INVALID_PREFERENCE naming it', () => {
    const e = caught(() => parsePreferences('handling=strict, foo=bar'));
    expect(e.code).toBe('INVALID_PREFERENCE');
    expect(e.status).toBe(400);
    expect(e.message).toContain('foo');
  });

  it('handling=strict applies wherever it appears in the list', () => {
    const e = caught(() => parsePreferences('foo=bar, handling=strict'));
    expect(e.code).toBe('INVALID_PREFERENCE');
  });

  it('handling=strict lists every invalid preference', () => {
    const e = caught(() => parsePreferences('handling=strict, foo, bar=1'));
    expect(e.code).toBe('INVALID_PREFERENCE');
    expect(e.message).toContain('foo');
    expect(e.message).toContain('bar');
  });

  it('handling=strict with an invalid value of a known preference is an error', () => {
    const e = caught(() => parsePreferences('handling=strict, return=everything'));
    expect(e.code).toBe('INVALID_PREFERENCE');
    expect(e.message).toContain('return=everything');
  });

  it('handling=strict with a non-numeric max-affected is an error', () => {
    const e = caught(() => parsePreferences('handling=strict, max-affected=abc'));
    expect(e.code).toBe('INVALID_PREFERENCE');
  });
});

// =============================================================================================
// 8. Range
// =============================================================================================

describe('Range', () => {
  it('no Range header: null', () => {
    expect(parseRange(null, null)).toBeNull();
    expect(parseRange(undefined, undefined)).toBeNull();
  });

  it('0-9', () => {
    expect(parseRange('0-9', null)).toEqual({ from: 0, to: 9 });
  });

  it('0-0', () => {
    expect(parseRange('0-0', null)).toEqual({ from: 0, to: 0 });
  });

  it('10- (open-ended)', () => {
    expect(parseRange('10-', null)).toEqual({ from: 10, to: null });
  });

  it('items=0-9', () => {
    expect(parseRange('items=0-9', null)).toEqual({ from: 0, to: 9 });
  });

  it('Range-Unit: items is accepted', () => {
    expect(parseRange('0-24', 'items')).toEqual({ from: 0, to: 24 });
  });

  it('5-5 is a valid one-row range', () => {
    expect(parseRange('5-5', 'items')).toEqual({ from: 5, to: 5 });
  });

  it.each(['abc', '-5', '0-9-', '1.5-3', '0-x', 'a-9', '0 9', 'bytes=0-9', '0--1'])(
    'malformed Range %s is 400 INVALID_QUERY',
    (range) => {
      const e = caught(() => parseRange(range, null));
      expect(e.code).toBe('INVALID_QUERY');
      expect(e.status).toBe(400);
      expect(e.message).toContain('Range');
    },
  );

  it('5-2 (lower above upper) is 416 RANGE_NOT_SATISFIABLE', () => {
    const e = caught(() => parseRange('5-2', null));
    expect(e.code).toBe('RANGE_NOT_SATISFIABLE');
    expect(e.status).toBe(416);
  });

  it('Range-Unit other than items is an error', () => {
    const e = caught(() => parseRange('0-9', 'bytes'));
    expect(e.code).toBe('INVALID_QUERY');
    expect(e.status).toBe(400);
    expect(e.message).toContain('bytes');
    expect(e.message).toContain('items');
  });
});

// =============================================================================================
// 9. Accept
// =============================================================================================

describe('Accept', () => {
  it('missing Accept means JSON', () => {
    expect(parseAccept(null)).toBe('json');
    expect(parseAccept(undefined)).toBe('json');
    expect(parseAccept('')).toBe('json');
  });

  it.each(['*/*', 'application/json', 'application/*', 'application/json; charset=utf-8'])(
    '%s means JSON',
    (accept) => {
      expect(parseAccept(accept)).toBe('json');
    },
  );

  it.each(['application/vnd.pgrst.object+json', 'application/vnd.pgrst.object'])(
    '%s means a single object',
    (accept) => {
      expect(parseAccept(accept)).toBe('object');
    },
  );

  it.each(['text/csv', 'TEXT/CSV', 'text/csv; charset=utf-8', 'text/csv;header=present'])('%s means CSV', (accept) => {
    expect(parseAccept(accept)).toBe('csv');
  });

  it('text/csv by q-value and order, like the other types', () => {
    expect(parseAccept('application/json;q=0.5, text/csv')).toBe('csv');
    expect(parseAccept('text/csv;q=0.5, application/json')).toBe('json');
    expect(parseAccept('text/csv, application/json')).toBe('csv');
    expect(parseAccept('*/*, text/csv')).toBe('json');
    expect(parseAccept('text/html, text/csv;q=0.8, */*;q=0.1')).toBe('csv');
    expect(parseAccept('text/csv;q=0, application/vnd.pgrst.object+json;q=0.1')).toBe('object');
  });

  it('text/* is not text/csv, as in PostgREST', () => {
    expect(caught(() => parseAccept('text/*')).code).toBe('NOT_ACCEPTABLE');
  });

  it('vnd.pgrst.object with parameters', () => {
    expect(parseAccept('application/vnd.pgrst.object+json; charset=utf-8')).toBe('object');
  });

  it('the first acceptable type wins at equal q', () => {
    expect(parseAccept('application/vnd.pgrst.object+json, application/json')).toBe('object');
    expect(parseAccept('application/json, application/vnd.pgrst.object+json')).toBe('json');
  });

  it('q-values decide over order', () => {
    expect(parseAccept('application/vnd.pgrst.object+json;q=0.5, application/json')).toBe('json');
    expect(parseAccept('application/json;q=0.1, application/vnd.pgrst.object+json;q=0.9')).toBe('object');
    expect(parseAccept('*/*;q=0.2, application/vnd.pgrst.object+json')).toBe('object');
  });

  it('q-values with spaces around parameters', () => {
    expect(parseAccept('application/json ; q=0.3 , application/vnd.pgrst.object+json ; q=0.8')).toBe('object');
  });

  it('an unknown type first, */* after it: JSON', () => {
    expect(parseAccept('text/unknown, */*')).toBe('json');
  });

  it('a browser-like Accept falls back to JSON via */*', () => {
    expect(parseAccept('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toBe('json');
  });

  it('text/unknown alone is 406 NOT_ACCEPTABLE naming the type', () => {
    const e = caught(() => parseAccept('text/unknown'));
    expect(e.code).toBe('NOT_ACCEPTABLE');
    expect(e.status).toBe(406);
    expect(e.message).toContain('text/unknown');
    expect(e.hint).toBe('Accept application/json, application/vnd.pgrst.object+json for a single object, or text/csv.');
  });

  it('several unknown types: 406', () => {
    const e = caught(() => parseAccept('text/unknown, image/png'));
    expect(e.code).toBe('NOT_ACCEPTABLE');
    expect(e.status).toBe(406);
  });
});

// =============================================================================================
// 10. parseRequest: everything together
// =============================================================================================

describe('parseEntityTags', () => {
  it('reads *, strong and weak tags, and nothing from an absent header', () => {
    expect(parseEntityTags(undefined)).toBeNull();
    expect(parseEntityTags(' * ')).toEqual({ any: true });
    expect(parseEntityTags('"a", W/"b","c,d"')).toEqual({
      any: false,
      tags: [
        { weak: false, version: 'a' },
        { weak: true, version: 'b' },
        { weak: false, version: 'c,d' },
      ],
    });
  });

  it('keeps the tags before a fault and none after it, so a malformed list never matches more', () => {
    expect(parseEntityTags('"a", b, "c"')).toEqual({ any: false, tags: [{ weak: false, version: 'a' }] });
    expect(parseEntityTags('a')).toEqual({ any: false, tags: [] });
    expect(parseEntityTags('"a" "b"')).toEqual({ any: false, tags: [] });
    expect(parseEntityTags('')).toEqual({ any: false, tags: [] });
  });
});

describe('parseRequest', () => {
  const headers =
    (h: Record<string, string>) =>
    (name: string): string | undefined => {
      for (const [k, v] of Object.entries(h)) if (k.toLowerCase() === name.toLowerCase()) return v;
      return undefined;
    };

  it('puts query, preferences, format and range together on GET', () => {
    const req = parseRequest({
      method: 'GET',
      resource: 'contact',
      query: '?select=id,name&name=ilike.*jo*&order=name.desc&limit=5',
      header: headers({ Prefer: 'count=exact', Accept: 'application/vnd.pgrst.object+json', Range: '0-4' }),
    });
    expect(req).toEqual({
      method: 'GET',
      resource: 'contact',
      query: {
        ...EMPTY_QUERY,
        select: [col('id'), col('name')],
        where: [{ ...filter('name', quant('ilike', '*jo*')), part: 1 }],
        order: [term('name', 'desc')],
        limit: 5,
      },
      preferences: { ...NO_PREFS, count: 'exact' },
      format: 'object',
      range: { from: 0, to: 4 },
      ifMatch: null,
    });
  });

  it('reads If-Match on PATCH and DELETE only', () => {
    const ifMatch = headers({ 'If-Match': '"1", W/"2"' });
    const tags = {
      any: false,
      tags: [
        { weak: false, version: '1' },
        { weak: true, version: '2' },
      ],
    };
    for (const method of ['PATCH', 'DELETE'] as Method[]) {
      expect(parseRequest({ method, resource: 'deal', query: '', header: ifMatch }).ifMatch).toEqual(tags);
    }
    expect(parseRequest({ method: 'GET', resource: 'deal', query: '', header: ifMatch }).ifMatch).toBeNull();
  });

  it('no headers: defaults', () => {
    const req = parseRequest({ method: 'GET', resource: 'deal', query: '', header: headers({}) });
    expect(req.query).toEqual(EMPTY_QUERY);
    expect(req.preferences).toEqual(NO_PREFS);
    expect(req.format).toBe('json');
    expect(req.range).toBeNull();
  });

  it.each(['HEAD', 'POST', 'PATCH', 'DELETE'] as Method[])('the Range header is ignored on %s', (method) => {
    const req = parseRequest({ method, resource: 'deal', query: 'id=eq.1', header: headers({ Range: '0-9' }) });
    expect(req.range).toBeNull();
  });

  it('a malformed Range is not an error where Range is ignored (POST)', () => {
    const req = parseRequest({ method: 'POST', resource: 'deal', query: '', header: headers({ Range: 'garbage' }) });
    expect(req.range).toBeNull();
  });

  it('the Range-Unit header is read on GET', () => {
    const e = caught(() =>
      parseRequest({
        method: 'GET',
        resource: 'deal',
        query: '',
        header: headers({ Range: '0-9', 'Range-Unit': 'bytes' }),
      }),
    );
    expect(e.code).toBe('INVALID_QUERY');
  });

  it('query errors surface from parseRequest', () => {
    expectSyntaxError(
      () => parseRequest({ method: 'GET', resource: 'deal', query: 'order=id.asc.nullslasttt', header: headers({}) }),
      {
        key: 'order',
        value: 'id.asc.nullslasttt',
        at: 16,
      },
    );
  });

  it('Accept errors surface from parseRequest', () => {
    const e = caught(() =>
      parseRequest({ method: 'GET', resource: 'deal', query: '', header: headers({ Accept: 'text/unknown' }) }),
    );
    expect(e.code).toBe('NOT_ACCEPTABLE');
  });

  it('strict Prefer errors surface from parseRequest', () => {
    const e = caught(() =>
      parseRequest({
        method: 'PATCH',
        resource: 'deal',
        query: 'id=eq.1',
        header: headers({ Prefer: 'handling=strict, nope' }),
      }),
    );
    expect(e.code).toBe('INVALID_PREFERENCE');
  });
});
