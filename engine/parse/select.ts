/**
 * `select` and `order`, in PostgREST's grammar:
 *   select: `*`, `alias:field->path::cast`, `field.sum()::cast`, `count()`, embeds
 *           `alias:relation!hint!inner(...)` and spreads `...relation(...)`, nesting freely;
 *   order:  `field->path.desc.nullslast` and `relation(field).asc` for a to-one embed.
 */
import { AGGREGATES, type AggregateFunction, type OrderTerm, type SelectItem } from '../request.ts';
import { parseFieldRef, parseName } from './field.ts';
import { Scanner } from './scanner.ts';

/** Whether `name:` (not `name::`) starts at the scanner: an alias. */
function aliasAhead(s: Scanner): boolean {
  const match = /^("(?:[^"\\]|\\.)*"|[\p{L}\p{N}_$ -]+):(?!:)/u.exec(s.input.slice(s.pos));
  return match !== null;
}

const isAggregate = (name: string): name is AggregateFunction => (AGGREGATES as readonly string[]).includes(name);

function parseCast(s: Scanner): string | null {
  return s.eat('::') ? parseName(s, 'a type to cast to') : null;
}

/** `!inner`, `!left` and one `!hint` (a foreign key or its field), in any order. */
function parseEmbedOptions(s: Scanner) {
  let hint: string | null = null;
  let join: 'inner' | 'left' | null = null;
  while (s.eat('!')) {
    const word = parseName(s, 'a join ("inner", "left") or a foreign key after "!"');
    if ((word === 'inner' || word === 'left') && join === null) join = word;
    else if (hint === null && word !== 'inner' && word !== 'left') hint = word;
    else throw s.error('"(": an embed takes one join and one foreign key at most');
  }
  return { hint, join };
}

/** `(items)` after an embed's name; `()` selects nothing. */
function parseEmbedSelect(s: Scanner, depth: number): SelectItem[] {
  s.expect('(', '"(" opening the embedded select');
  s.skipSpaces();
  if (s.eat(')')) return [];
  const items = parseItems(s, depth + 1);
  s.expect(')', '"," or ")"');
  return items;
}

/** Deeper embeds are refused: no schema needs them and they would exhaust the stack. */
const MAX_EMBED_DEPTH = 16;

function parseSelectItem(s: Scanner, depth: number): SelectItem {
  s.skipSpaces();
  if (s.eat('*')) {
    s.skipSpaces();
    return { kind: 'star' };
  }
  if (depth > MAX_EMBED_DEPTH) throw s.error(`a field (embeds nest at most ${MAX_EMBED_DEPTH} deep)`);
  if (s.eat('...')) {
    const relation = parseName(s, 'a relation to spread');
    const { hint, join } = parseEmbedOptions(s);
    const select = parseEmbedSelect(s, depth);
    s.skipSpaces();
    return { kind: 'embed', relation, hint, join, alias: null, spread: true, select };
  }
  let alias: string | null = null;
  if (aliasAhead(s)) {
    alias = parseName(s, 'an alias');
    s.expect(':');
  }
  if (s.eat('count()')) {
    const cast = parseCast(s);
    s.skipSpaces();
    return { kind: 'count', alias, cast };
  }
  const field = parseFieldRef(s);
  if (field.jsonPath.length === 0 && (s.peek() === '(' || s.peek() === '!')) {
    const { hint, join } = parseEmbedOptions(s);
    const select = parseEmbedSelect(s, depth);
    s.skipSpaces();
    return { kind: 'embed', relation: field.name, hint, join, alias, spread: false, select };
  }
  const cast = parseCast(s);
  let aggregate: Extract<SelectItem, { kind: 'field' }>['aggregate'] = null;
  if (s.eat('.')) {
    const at = s.pos;
    const fn = s.takeWhile((c) => /[a-z]/.test(c));
    if (!isAggregate(fn) || !s.eat('()')) {
      s.pos = at;
      throw s.error(`an aggregate function (${AGGREGATES.map((a) => `${a}()`).join(', ')})`);
    }
    aggregate = { fn, cast: parseCast(s) };
  }
  s.skipSpaces();
  return { kind: 'field', field, alias, cast, aggregate };
}

function parseItems(s: Scanner, depth: number): SelectItem[] {
  const items: SelectItem[] = [];
  do items.push(parseSelectItem(s, depth));
  while (s.eat(','));
  return items;
}

export function parseSelect(value: string): SelectItem[] {
  if (value.trim() === '') return [{ kind: 'star' }];
  const s = new Scanner(value, 'select', `select=${value}`, 'select='.length);
  const items = parseItems(s, 0);
  s.expectEnd('"," or the end of select');
  return items;
}

function parseOrderTerm(s: Scanner): OrderTerm {
  s.skipSpaces();
  let relation: string | null = null;
  let field = parseFieldRef(s);
  if (field.jsonPath.length === 0 && s.eat('(')) {
    relation = field.name;
    field = parseFieldRef(s);
    s.expect(')', '")" closing the embedded field');
  }
  let direction: OrderTerm['direction'] = null;
  let nulls: OrderTerm['nulls'] = null;
  if (s.eat('.asc')) direction = 'asc';
  else if (s.eat('.desc')) direction = 'desc';
  if (s.eat('.nullsfirst')) nulls = 'first';
  else if (s.eat('.nullslast')) nulls = 'last';
  s.skipSpaces();
  if (!s.done && s.peek() !== ',')
    throw s.error('".asc", ".desc", ".nullsfirst", ".nullslast", "," or the end of order');
  return { relation, field, direction, nulls };
}

/** `order=` (`name` is the parameter as written, `deal.order` for an embed). */
export function parseOrder(value: string, name = 'order'): OrderTerm[] {
  const s = new Scanner(value, 'order', `${name}=${value}`, name.length + 1);
  const terms: OrderTerm[] = [];
  do terms.push(parseOrderTerm(s));
  while (s.eat(','));
  s.expectEnd('"," or the end of order');
  return terms;
}
