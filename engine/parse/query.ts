/**
 * The query string, split and classified as PostgREST does: `select`, `columns`, `on_conflict`,
 * `order`, `limit`, `offset`, `and`/`or` trees, and every other `key=value` is a filter.
 * Decoding follows HTML forms (`+` is a space), as postgrest-js encodes with URLSearchParams.
 */
import { ApiError } from '../errors.ts';
import { OPERATORS } from '../operators.ts';
import type { Condition, OrderTerm, QueryParams } from '../request.ts';
import { parseFieldRef, parseName } from './field.ts';
import { parseFilterValue, parseLogicTree } from './filter.ts';
import { Scanner } from './scanner.ts';
import { parseOrder, parseSelect } from './select.ts';

function decode(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    throw new ApiError('INVALID_QUERY', `the query string holds a malformed percent-encoding: ${part}`, {
      hint: 'Encode "%" as %25 and other reserved characters with encodeURIComponent.',
    });
  }
}

/** The query string's `&`-separated parts, still encoded. */
const partsOf = (raw: string): string[] => raw.replace(/^\?/, '').split('&');

/** `key=value` pairs in order, each with its part's index; a part without `=` is ignored, as PostgREST does. */
function splitQuery(raw: string): Array<[string, string, number]> {
  const pairs: Array<[string, string, number]> = [];
  partsOf(raw).forEach((part, index) => {
    const eq = part.indexOf('=');
    if (eq >= 0) pairs.push([decode(part.slice(0, eq)), decode(part.slice(eq + 1)), index]);
  });
  return pairs;
}

/** A value written as an operator expression (`eq.5`, `not.in.(1,2)`, `fts(english).x`): a filter's. */
const OPERATION = new RegExp(`^(?:not\\.)?(?:${Object.keys(OPERATORS).join('|')})(?:\\([^)]*\\))?\\.`);

/**
 * A function call's query string (`/rpc/<name>?min_rating=4&genre=eq.sf`), split as PostgREST
 * splits it: a parameter named as an argument whose value is not an operator expression is that
 * argument (the last one given, when repeated); the rest, still encoded, filters the result.
 */
export function splitArguments(raw: string, names: ReadonlySet<string>): { args: Map<string, string>; rest: string } {
  const args = new Map<string, string>();
  const rest: string[] = [];
  for (const part of partsOf(raw)) {
    const eq = part.indexOf('=');
    const name = eq < 0 ? '' : decode(part.slice(0, eq));
    const value = eq < 0 ? '' : decode(part.slice(eq + 1));
    if (names.has(name) && !OPERATION.test(value)) args.set(name, value);
    else if (part !== '') rest.push(part);
  }
  return { args, rest: rest.join('&') };
}

/** Parameters that are not filters: these by name, and these last words (`deal.order`, `not.or`). */
const NAMED = ['select', 'columns', 'on_conflict'] as const;
const TAIL_WORDS = ['order', 'limit', 'offset', 'and', 'or'] as const;
const SPECIAL_TAIL = new RegExp(`^(?:(.*)\\.)?(${TAIL_WORDS.join('|')})$`);

/** A filter the read cache may vary: a plain field name, then a comparison and its value. */
const SLOT_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SLOT_VALUE = /^((?:not\.)?(?:eq|neq|gt|gte|lt|lte)\.)(.*)$/s;
const NOT_FIELDS: ReadonlySet<string> = new Set([...NAMED, ...TAIL_WORDS]);

/** A query string with the values of its comparisons (its slots) taken out: what requests of one shape share. */
export interface QueryShape {
  /** The query string with each slot's value replaced by a NUL character. */
  readonly text: string;
  /** Each slot's field, its value (decoded) and its part's index, in the order written. */
  readonly slots: ReadonlyArray<{ readonly field: string; readonly value: string; readonly part: number }>;
}

/**
 * The shape of a query string, split as `parseQuery` splits it: `id=eq.1` and `id=eq.2` share
 * `id=eq.\0`. Null when a slot's value is malformed, so that `parseQuery` reports it.
 */
export function queryShape(raw: string): QueryShape | null {
  const parts: string[] = [];
  const slots: Array<QueryShape['slots'][number]> = [];
  for (const [index, part] of partsOf(raw).entries()) {
    const eq = part.indexOf('=');
    const field = part.slice(0, eq);
    const slot = eq > 0 && SLOT_KEY.test(field) && !NOT_FIELDS.has(field) ? SLOT_VALUE.exec(part.slice(eq + 1)) : null;
    if (!slot) {
      parts.push(part);
      continue;
    }
    try {
      slots.push({ field, value: decode(slot[2]!), part: index });
    } catch {
      return null;
    }
    parts.push(`${field}=${slot[1]}\0`);
  }
  return { text: parts.join('&'), slots };
}

/** `limit=` or `offset=` (`name` is the parameter as written, `deal.limit` for an embed). */
function parseCount(name: string, value: string): number {
  const what = name.endsWith('limit') ? 'limit' : 'offset';
  const s = new Scanner(value, what, `${name}=${value}`, name.length + 1);
  s.skipSpaces();
  const digits = s.takeWhile((c) => c >= '0' && c <= '9');
  s.skipSpaces();
  if (!digits || digits.length > 15 || !s.done) {
    if (digits) s.pos = s.input.indexOf(digits) + digits.length;
    throw s.error('a whole number of zero or more');
  }
  return Number(digits);
}

/** `a,"b",c` as `columns=` and `on_conflict=` take: field names, each once. */
function parseNameList(parameter: 'columns' | 'on_conflict', value: string): string[] {
  const s = new Scanner(value, `${parameter} parameter`, `${parameter}=${value}`, parameter.length + 1);
  const names = new Set<string>();
  do {
    s.skipSpaces();
    names.add(parseName(s));
    s.skipSpaces();
  } while (s.eat(','));
  s.expectEnd(`"," or the end of ${parameter}`);
  return [...names];
}

/** A filter key: `[embed.]*field[->path]`; the embeds' path and the field. */
function parseFilterKey(key: string) {
  const s = new Scanner(key, 'filter', key);
  const path: string[] = [];
  let field = parseFieldRef(s);
  // A "." after a plain name steps into an embed: `deal.value`, `deal.contact.city`.
  while (field.jsonPath.length === 0 && s.eat('.')) {
    path.push(field.name);
    field = parseFieldRef(s);
  }
  if (s.startsWith('::')) throw s.error('"=" after the field (casts are not allowed in filters)');
  s.expectEnd('"=" after the field');
  return { path, field };
}

interface MutableLevel {
  where: Condition[];
  order: OrderTerm[];
  limit: number | null;
  offset: number | null;
}

export function parseQuery(raw: string): QueryParams {
  let select: QueryParams['select'] = null;
  let columns: QueryParams['columns'] = null;
  let onConflict: QueryParams['onConflict'] = null;
  const root: MutableLevel = { where: [], order: [], limit: null, offset: null };
  const embedded = new Map<string, MutableLevel>();
  const level = (path: readonly string[]): MutableLevel => {
    if (path.length === 0) return root;
    const key = path.join('.');
    const found = embedded.get(key) ?? { where: [], order: [], limit: null, offset: null };
    embedded.set(key, found);
    return found;
  };

  for (const [key, value, part] of splitQuery(raw)) {
    if (key === 'select') {
      select = parseSelect(value);
      continue;
    }
    if (key === 'columns') {
      columns = parseNameList('columns', value);
      continue;
    }
    if (key === 'on_conflict') {
      onConflict = parseNameList('on_conflict', value);
      continue;
    }
    const special = SPECIAL_TAIL.exec(key);
    if (special) {
      const [, prefix = '', word] = special;
      const logic = word === 'and' || word === 'or';
      // `not.or`, `deal.not.and`: a negated tree, at the top level or in an embed.
      const negated = logic && (prefix === 'not' || prefix.endsWith('.not'));
      const pathText = negated ? prefix.slice(0, -'not'.length).replace(/\.$/, '') : prefix;
      const target = level(pathText === '' ? [] : pathText.split('.'));
      const local = `${negated ? 'not.' : ''}${word}`;
      if (logic) target.where.push(parseLogicTree(local, value, key));
      else if (word === 'order') target.order = parseOrder(value, key);
      else if (word === 'limit') target.limit = parseCount(key, value);
      else target.offset = parseCount(key, value);
      continue;
    }
    const { path, field } = parseFilterKey(key);
    const { negated, operation } = parseFilterValue(key, value);
    level(path).where.push({ kind: 'filter', field, negated, operation, ...(path.length === 0 && { part }) });
  }
  return { select, ...root, embedded, columns, onConflict };
}
