/**
 * The query string, split and classified as PostgREST does: `select`, `columns`, `on_conflict`,
 * `order`, `limit`, `offset`, `and`/`or` trees, and every other `key=value` is a filter.
 * Decoding follows HTML forms (`+` is a space), as postgrest-js encodes with URLSearchParams.
 */
import { ApiError } from '../errors.ts';
import type { Condition, QueryParams } from '../request.ts';
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

/** `key=value` pairs in order; a part without `=` is ignored, as PostgREST does. */
function splitQuery(raw: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const part of raw.replace(/^\?/, '').split('&')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    pairs.push([decode(part.slice(0, eq)), decode(part.slice(eq + 1))]);
  }
  return pairs;
}

function parseCount(name: 'limit' | 'offset', value: string): number {
  const s = new Scanner(value, name, `${name}=${value}`, name.length + 1);
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

/** A filter key: a field name (quoted or not) with an optional JSON path, and nothing else. */
function parseFilterKey(key: string) {
  const s = new Scanner(key, 'filter', key);
  const field = parseFieldRef(s);
  if (s.startsWith('::')) throw s.error('"=" after the field (casts are not allowed in filters)');
  if (!s.done) {
    throw new ApiError('UNKNOWN_FIELD', `"${key}" is not a field; filtering on embedded resources is not supported`, {
      context: { parameter: key },
    });
  }
  return field;
}

const SPECIAL_TAIL = /^(?:(.*)\.)?(order|limit|offset|and|or)$/;

export function parseQuery(raw: string): QueryParams {
  let select: QueryParams['select'] = null;
  let order: QueryParams['order'] = [];
  let limit: number | null = null;
  let offset: number | null = null;
  let columns: QueryParams['columns'] = null;
  let onConflict: QueryParams['onConflict'] = null;
  const where: Condition[] = [];

  for (const [key, value] of splitQuery(raw)) {
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
      const [, prefix, word] = special;
      const logic = word === 'and' || word === 'or';
      if (prefix !== undefined && !(logic && prefix === 'not')) {
        throw new ApiError(
          'INVALID_QUERY',
          `"${key}" addresses an embedded resource "${prefix}"; embedding is not supported`,
          {
            context: { parameter: key },
          },
        );
      }
      if (logic) where.push(parseLogicTree(key, value));
      else if (word === 'order') order = parseOrder(value);
      else if (word === 'limit') limit = parseCount('limit', value);
      else offset = parseCount('offset', value);
      continue;
    }
    const field = parseFilterKey(key);
    const { negated, operation } = parseFilterValue(key, value);
    where.push({ kind: 'filter', field, negated, operation });
  }
  return { select, where, order, limit, offset, columns, onConflict };
}
