/**
 * Filters: `field=[not.]op[modifier].value` at the top level, and the `and=(...)` / `or=(...)`
 * logic trees whose items are `field.[not.]op.value` or nested `[not.]and(...)` groups.
 * PostgREST's grammar: a top-level value is taken verbatim to the end; inside a tree a value ends
 * at `,` or `)` unless it is `"quoted"` or a `{...}` literal.
 */
import { ApiError } from '../errors.ts';
import {
  type CompareOperator,
  isIsValue,
  isOperator,
  OPERATORS,
  type SearchOperator,
  TEXT_SEARCH_CONFIGS,
} from '../operators.ts';
import type { Condition, LogicNode, Operation, Quantifier } from '../request.ts';
import { parseFieldRef } from './field.ts';
import { Scanner } from './scanner.ts';

const OPERATORS_EXPECTED = `"not" or an operator (${Object.keys(OPERATORS).join(', ')})`;

/** Reads an operator's value; which characters end it depends on where the filter stands. */
type ValueReader = (s: Scanner) => string;

/** At the top level a value runs, verbatim, to the end of the parameter. */
const topLevelValue: ValueReader = (s) => s.rest();

const unquoted = (s: Scanner) => s.takeWhile((c) => c !== ',' && c !== ')');

/**
 * `"quoted"` when the closing quote ends the value (a `,` or `)` follows); otherwise the quotes
 * are part of an unquoted value, as in `in.("Q" Branch,x)`.
 */
function quotedOrRaw(s: Scanner): { value: string; quoted: boolean } {
  const start = s.pos;
  if (s.peek() === '"') {
    // An unclosed quote is an error: PostgREST would read it raw, but it is almost always a typo.
    const value = s.quoted();
    if (s.done || s.peek() === ',' || s.peek() === ')') return { value, quoted: true };
    s.pos = start;
  }
  return { value: unquoted(s), quoted: false };
}

/** Inside a logic tree: `"quoted"`, a `{...}` literal, or characters up to `,` or `)`. */
const treeValue: ValueReader = (s) => {
  if (s.peek() === '"') return quotedOrRaw(s).value;
  if (s.peek() === '{') {
    const start = s.pos;
    while (!s.done && s.peek() !== '}') s.pos++;
    s.expect('}', 'a closing "}"');
    return s.input.slice(start, s.pos);
  }
  return unquoted(s);
};

/** `(a,"b,c", d)`: the elements of an `in` list. */
function parseList(s: Scanner): string[] {
  s.skipSpaces();
  s.expect('(', 'a "(" opening the list');
  s.skipSpaces();
  const values: string[] = [];
  let quoted = false;
  for (;;) {
    const element = quotedOrRaw(s);
    quoted = element.quoted;
    values.push(element.value);
    if (s.eat(',')) continue;
    s.expect(')', '"," or ")"');
    break;
  }
  s.skipSpaces();
  // `in.()` and `in.( )` are the empty list; `in.("")` is the list of one empty string.
  return values.length === 1 && !quoted && values[0]!.trim() === '' ? [] : values;
}

function parseOperation(s: Scanner, readValue: ValueReader): { negated: boolean; operation: Operation } {
  const negated = s.eat('not.');
  const start = s.pos;
  const op = s.takeWhile((c) => /[a-z_]/.test(c));
  if (!isOperator(op)) {
    s.pos = start;
    throw s.error(OPERATORS_EXPECTED);
  }
  const { grammar } = OPERATORS[op];
  if (grammar === 'list') {
    s.expect('.', '"." after the operator');
    return { negated, operation: { kind: 'in', values: parseList(s) } };
  }
  if (grammar === 'is') {
    s.expect('.', '"." after the operator');
    const at = s.pos;
    const value = readValue(s).trim().toLowerCase();
    if (!isIsValue(value)) {
      s.pos = at;
      throw s.error('null, not_null, true, false or unknown after "is."');
    }
    return { negated, operation: { kind: 'is', value } };
  }
  if (grammar === 'search') {
    let config: string | null = null;
    if (s.eat('(')) {
      // A text-search configuration, by name or as pg_catalog.name: it is cast to regconfig.
      config = s.takeWhile((c) => /[A-Za-z0-9_.]/.test(c));
      if (!/^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?$/.test(config)) throw s.error('a text search language such as english');
      s.expect(')');
      if (!TEXT_SEARCH_CONFIGS.has(config.replace(/^pg_catalog\./, ''))) {
        throw new ApiError('INVALID_QUERY', `"${config}" is not a text search configuration of this API`, {
          hint: `Text search configurations: ${[...TEXT_SEARCH_CONFIGS].join(', ')}.`,
          context: { operator: op, config },
        });
      }
    }
    s.expect('.', '"." after the operator');
    return { negated, operation: { kind: 'search', op: op as SearchOperator, config, value: readValue(s) } };
  }
  let quantifier: Quantifier | null = null;
  if (grammar === 'quantifiable') {
    if (s.eat('(any)')) quantifier = 'any';
    else if (s.eat('(all)')) quantifier = 'all';
    else if (s.peek() === '(') throw s.error('"(any)" or "(all)"');
  }
  s.expect('.', '"." after the operator');
  return { negated, operation: { kind: 'compare', op: op as CompareOperator, quantifier, value: readValue(s) } };
}

/** The value of a filter parameter, such as `not.in.(1,2)` or `ilike(any).{a*,b*}`. */
export function parseFilterValue(key: string, value: string): { negated: boolean; operation: Operation } {
  const s = new Scanner(value, 'filter', `${key}=${value}`, key.length + 1);
  const parsed = parseOperation(s, topLevelValue);
  s.expectEnd('the end of the filter');
  return parsed;
}

const LOGIC_GROUP = /^(not\.)?(and|or)\s*\(/;

/** Deeper trees are refused: they are never needed and would exhaust the stack. */
const MAX_DEPTH = 32;

function parseTreeItems(s: Scanner, depth = 1): Condition[] {
  if (depth > MAX_DEPTH) throw s.error(`a condition (logic trees nest at most ${MAX_DEPTH} deep)`);
  s.skipSpaces();
  s.expect('(', 'a "(" opening the group');
  const items: Condition[] = [];
  do {
    s.skipSpaces();
    const group = LOGIC_GROUP.exec(s.input.slice(s.pos));
    if (group) {
      s.pos += (group[1] ?? '').length + group[2]!.length;
      items.push({
        kind: 'logic',
        op: group[2] as 'and' | 'or',
        negated: Boolean(group[1]),
        children: parseTreeItems(s, depth + 1),
      });
    } else {
      if (s.peek() === ')' || s.peek() === ',' || s.done) {
        throw s.error('a field name, "not" or a logic operator (and, or)');
      }
      const field = parseFieldRef(s);
      s.expect('.', '"." after the field name');
      const { negated, operation } = parseOperation(s, treeValue);
      items.push({ kind: 'filter', field, negated, operation });
    }
    s.skipSpaces();
  } while (s.eat(','));
  s.expect(')', '"," or ")"');
  s.skipSpaces();
  return items;
}

/** An `and=`/`or=`/`not.and=`/`not.or=` parameter; `shown` is it as written (`deal.or` in an embed). */
export function parseLogicTree(key: string, value: string, shown = key): LogicNode {
  const negated = key.startsWith('not.');
  const op = (negated ? key.slice(4) : key) as 'and' | 'or';
  const s = new Scanner(value, 'logic tree', `${shown}=${value}`, shown.length + 1);
  const children = parseTreeItems(s);
  s.expectEnd('the end of the logic tree');
  return { kind: 'logic', op, negated, children };
}
