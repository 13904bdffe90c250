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
import { setBounded } from './bounded.ts';
import { type Scope, scopeValues } from './compile/scope.ts';
import type { CompiledStatement } from './compile/sql.ts';
import type { SqlParam } from './db/port.ts';
import type { ColumnType } from './field-kinds.ts';
import { type RawRequest, REQUEST_HEADERS } from './parse/index.ts';
import { type QueryShape, queryShape } from './parse/query.ts';
import type { ReadPlan } from './plan/types.ts';
import { checkValue } from './plan/values.ts';

export interface CompiledRead {
  readonly plan: ReadPlan;
  readonly statement: CompiledStatement;
}

/** A held read; for a shape, where each slot's value goes and the kind it is checked as. */
interface Entry extends CompiledRead {
  readonly slots: ReadonlyArray<{ readonly at: readonly number[]; readonly field: string; readonly type: ColumnType }>;
}

/** Longer query strings are compiled each time rather than held. */
const MAX_KEY_LENGTH = 2048;

/**
 * Where the compiler put each slot's value among the statement's parameters, or null when a slot
 * is not the value of a comparison as written (the compiler recorded no place for it, or put
 * something else there), or when the plan reads its filter values after the statement (a planned
 * count compiles an estimate from them): such a read is held whole.
 */
function slotsOf(shape: QueryShape, made: CompiledRead): Entry['slots'] | null {
  if (made.plan.count === 'planned' || made.plan.count === 'estimated') return null;
  const { params, parts } = made.statement;
  const slots: Array<Entry['slots'][number]> = [];
  for (const { field, value, part } of shape.slots) {
    const at = parts?.get(part);
    if (!at || at.some((index) => params[index] !== value)) return null;
    const type = made.plan.resource.field(field)?.type;
    if (type === undefined) return null;
    slots.push({ at, field, type });
  }
  return slots;
}

export class ReadCache {
  readonly #entries = new Map<string, Entry>();

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.#entries.size;
  }

  /** The held read for `raw` under `scope`, or the one `compile` makes (and the cache keeps). */
  read(raw: RawRequest, scope: Scope | undefined, compile: () => CompiledRead): CompiledRead {
    const values = scopeValues(scope);
    // Each kind of scope has its own statement: none, a tenant, a token, or a token and its tenant.
    const kind = scope === undefined ? 'n' : 'tokenHash' in scope ? `k${values.length}` : 't';
    let head = `${kind} ${raw.method} ${raw.resource}`;
    for (const name of REQUEST_HEADERS) head += `\n${raw.header(name) ?? ''}`;
    const shape = this.capacity === 0 ? null : queryShape(raw.query);
    // A shape without slots is its query string; one with slots may be held whole instead (slotsOf).
    const shapeKey = shape && `${head}\n${shape.slots.length ? 's' : 'q'}${shape.text}`;
    const wholeKey = `${head}\nq${raw.query}`;
    if (!shape || shapeKey!.length > MAX_KEY_LENGTH || wholeKey.length > MAX_KEY_LENGTH) return compile();

    const held = this.#take(shapeKey!) ?? (shape.slots.length ? this.#take(wholeKey) : undefined);
    if (!held) {
      const made = compile();
      const slots = shape.slots.length ? slotsOf(shape, made) : [];
      this.#put(slots ? shapeKey! : wholeKey, { ...made, slots: slots ?? [] });
      return made;
    }
    if (values.length === 0 && held.slots.length === 0) return held;
    const params: SqlParam[] = [...held.statement.params];
    params.splice(0, values.length, ...values);
    held.slots.forEach((slot, i) => {
      const { value } = shape.slots[i]!;
      checkValue(slot.field, slot.type, value);
      for (const index of slot.at) params[index] = value;
    });
    return { plan: held.plan, statement: { ...held.statement, params } };
  }

  /** The entry under `key`, made the most recently used (Map keeps insertion order). */
  #take(key: string): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
    }
    return entry;
  }

  #put(key: string, entry: Entry): void {
    setBounded(this.#entries, key, entry, this.capacity);
  }
}
