/**
 * `engage import --columns a=b,notes= --ignore-unknown`: a file's columns (CSV) or keys (JSON, NDJSON)
 * renamed or dropped before it is uploaded, as the server fails every item with a key its collection
 * does not know. The file is rewritten whole, in its own type.
 */
import { parseJson } from '@engage/engine';
import { InvalidArgumentError } from 'commander';
import { parse } from 'csv-parse/sync';
import { jsonFileItems, ndjsonLines } from '../imports/index.ts';

/** `--columns`: each source column's new name, '' to drop it. */
export type Columns = ReadonlyMap<string, string>;

export function parseColumns(value: string): Columns {
  const columns = new Map<string, string>();
  for (const pair of value.split(',')) {
    const at = pair.indexOf('=');
    const from = pair.slice(0, Math.max(at, 0)).trim();
    if (at < 0 || from === '') {
      throw new InvalidArgumentError(
        `must be SOURCE=FIELD pairs separated by commas (SOURCE= drops the column); "${pair}" is not one.`,
      );
    }
    if (columns.has(from)) throw new InvalidArgumentError(`names the column "${from}" twice.`);
    columns.set(from, pair.slice(at + 1).trim());
  }
  return columns;
}

/** A mapping that does not fit the file: a usage error. */
export class ColumnsError extends Error {}

/** The keys a collection knows, when those it does not are dropped (`--ignore-unknown`). */
export interface Known {
  readonly collection: string;
  readonly keys: ReadonlySet<string>;
}

export interface Reshaped {
  readonly content: Buffer;
  readonly total: number;
  readonly renamed: ReadonlyArray<readonly [string, string]>;
  /** Dropped by `--columns a=`. */
  readonly dropped: readonly string[];
  /** Dropped as the collection does not know them (`--ignore-unknown`). */
  readonly ignored: readonly string[];
}

/** Each of the file's keys' new name, or null when it is dropped. */
function plan(keys: readonly string[], columns: Columns, known: Known | undefined) {
  const missing = [...columns.keys()].filter((k) => !keys.includes(k));
  if (missing.length > 0) {
    throw new ColumnsError(
      `--columns names ${quoted(missing)}, which the file does not have; its columns are ${quoted(keys)}.`,
    );
  }
  // A mistyped target would otherwise be dropped as unknown, silently.
  const strays = [...columns].filter(([, to]) => to !== '' && known && !known.keys.has(to));
  if (known && strays.length > 0) {
    const renames = strays.map(([from, to]) => `"${from}" to "${to}"`).join(', ');
    throw new ColumnsError(
      `--columns renames ${renames}, which ${known.collection} does not know: ` +
        'correct the field name, or drop the column with SOURCE=.',
    );
  }
  const names = new Map<string, string | null>();
  const taken = new Map<string, string>();
  const renamed: Array<[string, string]> = [];
  const dropped: string[] = [];
  const ignored: string[] = [];
  for (const key of keys) {
    const name = columns.get(key) ?? key;
    names.set(key, null);
    if (name === '') dropped.push(key);
    else if (known && !known.keys.has(name)) ignored.push(key);
    else if (taken.has(name)) {
      throw new ColumnsError(
        `the columns "${taken.get(name)}" and "${key}" would both be "${name}": drop or rename one with --columns.`,
      );
    } else {
      taken.set(name, key);
      names.set(key, name);
      if (name !== key) renamed.push([key, name]);
    }
  }
  return { names, renamed, dropped, ignored };
}

const quoted = (names: readonly string[]) => names.map((n) => `"${n}"`).join(', ');

const csvCell = (cell: string) => (/[",\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);

/** A number JSON.parse read as ±Infinity (past ±1.8e308), which JSON.stringify would write as null. */
const overflows = (value: unknown): boolean =>
  typeof value === 'number'
    ? !Number.isFinite(value)
    : typeof value === 'object' && value !== null && Object.values(value).some(overflows);

/** The file with its keys renamed and dropped (and, with `known`, those the collection does not know). */
export function reshape(content: Buffer, type: string, columns: Columns, known?: Known): Reshaped {
  const text = content.toString('utf8');
  if (type === 'text/csv') {
    const [header = [], ...rows] = parse(text, { bom: true, skip_empty_lines: true }) as string[][];
    const { names, ...report } = plan(header, columns, known);
    const kept = header.flatMap((key, i) => (names.get(key) === null ? [] : [i]));
    const lines = [kept.map((i) => names.get(header[i]!)!), ...rows.map((row) => kept.map((i) => row[i]!))];
    const csv = lines.map((cells) => `${cells.map(csvCell).join(',')}\n`).join('');
    return { content: Buffer.from(csv), total: rows.length, ...report };
  }
  const ndjson = type === 'application/x-ndjson';
  const items = ndjson ? ndjsonLines(text).map((line) => parseJson(line)) : jsonFileItems(text);
  const isItem = (item: unknown): item is Record<string, unknown> =>
    typeof item === 'object' && item !== null && !Array.isArray(item);
  // Items that are not objects stay as they are: the server says what is wrong with them.
  const keys = [...new Set(items.flatMap((item) => (isItem(item) ? Object.keys(item) : [])))];
  const { names, ...report } = plan(keys, columns, known);
  const out = items.map((item, index) => {
    if (!isItem(item)) return item;
    const kept = Object.entries(item).filter(([k]) => names.get(k) !== null);
    const [key] = kept.find(([, v]) => overflows(v)) ?? [];
    if (key !== undefined) {
      throw new ColumnsError(
        `item ${index}'s "${key}" is a number too large for JSON, which rewriting the file (--columns, ` +
          '--ignore-unknown) would turn into null: correct it, or import the file without those options.',
      );
    }
    return Object.fromEntries(kept.map(([k, v]) => [names.get(k)!, v]));
  });
  const body = ndjson ? out.map((item) => `${JSON.stringify(item)}\n`).join('') : JSON.stringify(out);
  return { content: Buffer.from(body), total: items.length, ...report };
}
