/**
 * Compiled reads, by request shape. A read's plan and statement depend only on the resource,
 * method, query string, the headers the parser reads and the kind of scope; the scope's values are
 * always the first parameters (scopeValues), and the value of each comparison on a plain field
 * (`id=eq.<uuid>`, a slot) is a parameter the compiler records as it adds it (Params.parts). So a
 * read of a known shape (a polled page, an object fetched by id, a dashboard's lists) skips parse,
 * plan and compile: its slot values are checked as the planner checks them and bound where the
 * compiler put them, with the caller's scope. Every value stays a
 * bound parameter, and statements of one shape share their text, so PostgreSQL's prepared
 * statement serves them all. Bounded; the least recently used entry goes.
 */
import { setBounded, takeRecent } from './bounded.ts';
import { type Scope, scopeValues } from './compile/scope.ts';
import type { CompiledStatement } from './compile/sql.ts';
import type { SqlParam } from './db/port.ts';
import type { ColumnType } from './field-kinds.ts';
import { type RawRequest, REQUEST_HEADERS } from './parse/index.ts';
import { type QueryShape, queryShape } from './parse/query.ts';
import type { ReadPlan } from './plan/types.ts';
import { checkValue } from './plan/values.ts';
import type { Resource } from './registry/index.ts';

export interface CompiledRead {
  readonly plan: ReadPlan;
  readonly statement: CompiledStatement;
}

/** For a shape, where each slot's value goes and the kind it is checked as. */
export type Slots = ReadonlyArray<{
  readonly at: readonly number[];
  readonly field: string;
  readonly type: ColumnType;
}>;

/** A held read and its slots. */
interface Entry extends CompiledRead {
  readonly slots: Slots;
}

/** Longer query strings are compiled each time rather than held. */
const MAX_KEY_LENGTH = 2048;

/**
 * What decides a statement beside the query string: the kind of scope (none, a tenant, a token, or a
 * token and its tenant: each has its own statement), the method, the resource and `headers`.
 */
export function shapeHead(raw: RawRequest, scope: Scope | undefined, headers: readonly string[]): string {
  const kind = scope === undefined ? 'n' : 'tokenHash' in scope ? `k${scopeValues(scope).length}` : 't';
  let head = `${kind} ${raw.method} ${raw.resource}`;
  // An empty header is not an absent one (`If-Match:` matches nothing).
  for (const name of headers) {
    const value = raw.header(name) ?? null;
    head += value === null ? '\n' : `\n=${value}`;
  }
  return head;
}

/** The shape of `raw`'s query string, or null when it is not to be held (malformed, or too long). */
export function heldShape(raw: RawRequest, head: string): QueryShape | null {
  const shape = queryShape(raw.query);
  return shape && head.length + Math.max(shape.text.length, raw.query.length) + 2 <= MAX_KEY_LENGTH ? shape : null;
}

/**
 * Where the compiler put each slot's value among the statement's parameters, or null when a slot
 * is not the value of a comparison as written (the compiler recorded no place for it, or put
 * something else there): such a statement is held whole, or not at all.
 */
export function slotsOf(shape: QueryShape, statement: CompiledStatement, resource: Resource): Slots | null {
  const { params, parts } = statement;
  const slots: Array<Slots[number]> = [];
  for (const { field, value, part } of shape.slots) {
    const at = parts?.get(part);
    if (!at || at.some((index) => params[index] !== value)) return null;
    const type = resource.field(field)?.type;
    if (type === undefined) return null;
    slots.push({ at, field, type });
  }
  return slots;
}

/** Whether the statement's first parameters are the scope's values, as scopeCte adds them. */
export const scopedFirst = (statement: CompiledStatement, values: readonly string[]): boolean =>
  values.every((value, i) => statement.params[i] === value);

/**
 * The held statement's parameters for this request: the caller's scope first, and each slot's value
 * of `shape`, checked as the planner checks it, where the compiler put it.
 */
export function bind(held: CompiledStatement, values: readonly string[], slots: Slots, shape: QueryShape): SqlParam[] {
  const params: SqlParam[] = [...held.params];
  params.splice(0, values.length, ...values);
  slots.forEach((slot, i) => {
    const { value } = shape.slots[i]!;
    checkValue(slot.field, slot.type, value);
    for (const index of slot.at) params[index] = value;
  });
  return params;
}

export class ReadCache {
  readonly #entries = new Map<string, Entry>();

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.#entries.size;
  }

  /** The held read for `raw` under `scope`, or the one `compile` makes (and the cache keeps). */
  read(raw: RawRequest, scope: Scope | undefined, compile: () => CompiledRead): CompiledRead {
    const head = shapeHead(raw, scope, REQUEST_HEADERS);
    const shape = this.capacity === 0 ? null : heldShape(raw, head);
    if (!shape) return compile();
    // A shape without slots is its query string; one with slots may be held whole instead (slotsOf).
    const shapeKey = `${head}\n${shape.slots.length ? 's' : 'q'}${shape.text}`;
    const wholeKey = `${head}\nq${raw.query}`;
    const held =
      takeRecent(this.#entries, shapeKey) ?? (shape.slots.length ? takeRecent(this.#entries, wholeKey) : undefined);
    const values = scopeValues(scope);
    if (!held) {
      const made = compile();
      // A planned count reads its filter values after the statement (an estimate): held whole.
      const counted = made.plan.count === 'planned' || made.plan.count === 'estimated';
      const slots = !shape.slots.length ? [] : counted ? null : slotsOf(shape, made.statement, made.plan.resource);
      if (scopedFirst(made.statement, values)) this.#put(slots ? shapeKey : wholeKey, { ...made, slots: slots ?? [] });
      return made;
    }
    if (values.length === 0 && held.slots.length === 0) return held;
    return {
      plan: held.plan,
      statement: { ...held.statement, params: bind(held.statement, values, held.slots, shape) },
    };
  }

  #put(key: string, entry: Entry): void {
    setBounded(this.#entries, key, entry, this.capacity);
  }
}
