/** `select=*,id,alias:field,field::cast,data->key` and `order=field.desc.nullslast,...`. */
import type { OrderTerm, SelectItem } from '../request.ts';
import { parseFieldRef, parseName } from './field.ts';
import { Scanner } from './scanner.ts';

/** Whether `name:` (not `name::`) starts at the scanner: an alias. */
function aliasAhead(s: Scanner): boolean {
  const match = /^("(?:[^"\\]|\\.)*"|[\p{L}\p{N}_$ -]+):(?!:)/u.exec(s.input.slice(s.pos));
  return match !== null;
}

const EMBEDDING = 'embedding other resources is not supported';
const AGGREGATES = 'aggregate functions are not supported';

function parseSelectItem(s: Scanner): SelectItem {
  s.skipSpaces();
  if (s.eat('*')) return { kind: 'star' };
  if (s.startsWith('...')) throw s.error(`a field name (${EMBEDDING}, spread included)`);
  if (/^count\(\s*\)/.test(s.input.slice(s.pos))) throw s.error(`a field name (${AGGREGATES})`);
  let alias: string | null = null;
  if (aliasAhead(s)) {
    alias = parseName(s, 'an alias');
    s.expect(':');
  }
  const field = parseFieldRef(s);
  if (s.peek() === '(' || s.peek() === '!') throw s.error(`"," or "::" (${EMBEDDING})`);
  let cast: string | null = null;
  if (s.eat('::')) cast = parseName(s, 'a type to cast to');
  if (s.peek() === '.') throw s.error(`"," or "::" (${AGGREGATES})`);
  s.skipSpaces();
  return { kind: 'field', field, alias, cast };
}

export function parseSelect(value: string): SelectItem[] {
  if (value.trim() === '') return [{ kind: 'star' }];
  const s = new Scanner(value, 'select', `select=${value}`, 'select='.length);
  const items: SelectItem[] = [];
  do items.push(parseSelectItem(s));
  while (s.eat(','));
  s.expectEnd('"," or the end of select');
  return items;
}

function parseOrderTerm(s: Scanner): OrderTerm {
  s.skipSpaces();
  const field = parseFieldRef(s);
  if (s.peek() === '(') throw s.error('"." or "," (ordering by an embedded resource is not supported)');
  let direction: OrderTerm['direction'] = null;
  let nulls: OrderTerm['nulls'] = null;
  if (s.eat('.asc')) direction = 'asc';
  else if (s.eat('.desc')) direction = 'desc';
  if (s.eat('.nullsfirst')) nulls = 'first';
  else if (s.eat('.nullslast')) nulls = 'last';
  s.skipSpaces();
  if (!s.done && s.peek() !== ',')
    throw s.error('".asc", ".desc", ".nullsfirst", ".nullslast", "," or the end of order');
  return { field, direction, nulls };
}

export function parseOrder(value: string): OrderTerm[] {
  const s = new Scanner(value, 'order', `order=${value}`, 'order='.length);
  const terms: OrderTerm[] = [];
  do terms.push(parseOrderTerm(s));
  while (s.eat(','));
  s.expectEnd('"," or the end of order');
  return terms;
}
