/**
 * Compiled reads, by request. A read's plan and statement depend only on the resource, method,
 * query string, the headers the parser reads and the kind of scope; the scope's values are always
 * the first parameters (scopeValues). So a repeated read (a polled page, a dashboard's lists, an object fetched again)
 * skips parse, plan and compile and only swaps in the caller's scope. Every value stays a bound
 * parameter, and statements of one query shape share their text, so PostgreSQL's prepared
 * statement serves them all whatever the values. Bounded; the least recently used entry goes.
 */
import { type Scope, scopeValues } from './compile/scope.ts';
import type { CompiledStatement } from './compile/sql.ts';
import { type RawRequest, REQUEST_HEADERS } from './parse/index.ts';
import type { ReadPlan } from './plan/types.ts';

export interface CompiledRead {
  readonly plan: ReadPlan;
  readonly statement: CompiledStatement;
}

/** Longer query strings are compiled each time rather than held. */
const MAX_KEY_LENGTH = 2048;

export class ReadCache {
  readonly #entries = new Map<string, CompiledRead>();

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.#entries.size;
  }

  /** The cached read for `raw` under `scope`, or the one `compile` makes (and the cache keeps). */
  read(raw: RawRequest, scope: Scope | undefined, compile: () => CompiledRead): CompiledRead {
    const values = scopeValues(scope);
    // Each kind of scope has its own statement: none, a tenant, a token, or a token and its tenant.
    const kind = scope === undefined ? 'n' : 'tokenHash' in scope ? `k${values.length}` : 't';
    let key = `${kind} ${raw.method} ${raw.resource}?${raw.query}`;
    for (const name of REQUEST_HEADERS) key += `\n${raw.header(name) ?? ''}`;
    if (key.length > MAX_KEY_LENGTH || this.capacity === 0) return compile();

    const cached = this.#entries.get(key);
    if (!cached) {
      const made = compile();
      if (this.#entries.size >= this.capacity) this.#entries.delete(this.#entries.keys().next().value!);
      this.#entries.set(key, made);
      return made;
    }
    // Most recently used last: Map keeps insertion order.
    this.#entries.delete(key);
    this.#entries.set(key, cached);
    if (values.length === 0) return cached;
    const params = [...cached.statement.params];
    params.splice(0, values.length, ...values);
    return { plan: cached.plan, statement: { ...cached.statement, params } };
  }
}
