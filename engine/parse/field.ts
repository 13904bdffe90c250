/** Field names and JSON paths, as they appear in filters, `select` and `order`. */
import type { FieldRef, JsonPathStep } from '../request.ts';
import type { Scanner } from './scanner.ts';

const NAME_CHAR = /[\p{L}\p{N}_$ ]/u;
/** Characters that end an unquoted JSON key. */
const KEY_STOP = new Set(['(', ')', '-', ':', '.', ',', '>', '']);

/** A field name: `"quoted"` (any characters) or letters, digits, `_`, `$`, spaces and `-` not before `>`. */
export function parseName(s: Scanner, expected = 'a field name'): string {
  if (s.peek() === '"') return s.quoted();
  const start = s.pos;
  while (NAME_CHAR.test(s.peek()) || (s.peek() === '-' && s.peek(1) !== '>')) s.pos++;
  const name = s.input.slice(start, s.pos).trim();
  if (!name) {
    s.pos = start;
    throw s.error(expected);
  }
  return name;
}

function parseJsonKey(s: Scanner): string | number {
  if (s.peek() === '"') return s.quoted();
  const start = s.pos;
  // A "-" belongs to the key (`a-b`, `-1`) unless it starts the next arrow.
  while (!KEY_STOP.has(s.peek()) || (s.peek() === '-' && s.peek(1) !== '>')) s.pos++;
  const key = s.input.slice(start, s.pos);
  if (!key || (key.startsWith('-') && !/^-\d+$/.test(key))) {
    s.pos = start;
    throw s.error('a JSON key or array index');
  }
  if (!/^-?\d+$/.test(key)) return key;
  const index = Number(key);
  if (Math.abs(index) > 2147483647) {
    s.pos = start;
    throw s.error('an array index between -2147483648 and 2147483647');
  }
  return index;
}

/** `name`, optionally followed by a JSON path such as `->a->>b` or `->0`. */
export function parseFieldRef(s: Scanner): FieldRef {
  const name = parseName(s);
  const jsonPath: JsonPathStep[] = [];
  while (s.startsWith('->')) {
    const arrow = s.eat('->>') ? '->>' : '->';
    if (arrow === '->') s.expect('->');
    jsonPath.push({ arrow, key: parseJsonKey(s) });
    // `->>` gives text, which has no keys: it can only end a path.
    if (arrow === '->>' && s.startsWith('->')) throw s.error('the end of the JSON path after a "->>" step');
  }
  return { name, jsonPath };
}

/** How a field ref is written back in messages. */
export const showField = (field: FieldRef): string =>
  field.name + field.jsonPath.map((step) => step.arrow + String(step.key)).join('');
