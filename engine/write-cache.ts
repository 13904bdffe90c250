/**
 * Compiled writes of one object (a PATCH, or a POST naming no other record), by request shape, as
 * the read cache holds reads (read-cache.ts). Beside the query string's shape, the headers a write
 * reads and the kind of scope, the keys the body gives decide the statement (the fields it sets);
 * the body itself is checked on every request, as the planner checks it, and bound with the tenants
 * it names and the request's Idempotency-Key where the compiler put them (Params.named), the
 * caller's scope and each slot's value as a read's. A write of a known shape (a deal's stage moved, a note added) skips parse, plan and
 * compile, and its statement is the same string each time. Bounded; the least recently used entry goes.
 */
import { setBounded, takeRecent } from './bounded.ts';
import type { IdempotencyKey } from './compile/idempotency.ts';
import { type Scope, scopeValues } from './compile/scope.ts';
import { BOUND, type CompiledStatement } from './compile/sql.ts';
import type { RawRequest } from './parse/index.ts';
import type { QueryShape } from './parse/query.ts';
import type { InsertPlan, UpdatePlan, WritePlan } from './plan/types.ts';
import { arrayLiteral } from './plan/values.ts';
import { bind, heldShape, type Slots, scopedFirst, shapeHead, slotsOf } from './read-cache.ts';
import type { Field } from './registry/index.ts';

/** The headers a write's plan reads. */
const WRITE_HEADERS = ['prefer', 'accept', 'if-match'] as const;

export interface CompiledWrite<P extends WritePlan = WritePlan> {
  readonly plan: P;
  readonly statement: CompiledStatement;
}

/** A write's body as the planner checked it (checkUpdateBody, checkInsertBody). */
export interface CheckedBody {
  /** The JSON text the statement takes: a PATCH's row, a POST's rows. */
  readonly text: string;
  readonly claimedTenants: readonly string[];
  /** The fields it sets, in the resource's order. */
  readonly fields: readonly Field[];
}

interface Entry extends CompiledWrite<UpdatePlan | InsertPlan> {
  readonly slots: Slots;
}

/** The plan's body as the compiler took it. */
const bodyText = (plan: UpdatePlan | InsertPlan) => (plan.kind === 'update' ? plan.row : plan.rows);

/** A request's value of each named parameter (BOUND), as the compiler puts it; undefined where it has none. */
function boundValues(
  text: string,
  claimedTenants: readonly string[],
  idempotent: IdempotencyKey | null,
): Readonly<Record<string, string | undefined>> {
  return {
    [BOUND.row]: text,
    [BOUND.claimed]: arrayLiteral(claimedTenants),
    [BOUND.key]: idempotent?.key,
    [BOUND.fingerprint]: idempotent?.fingerprint,
  } satisfies Record<(typeof BOUND)[keyof typeof BOUND], string | undefined>;
}

/** Whether a plan is of a write held by shape: one object, nothing but its own fields. */
function holdable(plan: WritePlan): plan is UpdatePlan | InsertPlan {
  if (plan.kind === 'update') return plan.items === null && plan.customValues === null;
  if (plan.kind !== 'insert') return false;
  const { nested } = plan;
  return !plan.put && plan.groups === null && nested.references.length === 0 && nested.children.length === 0;
}

export class WriteCache {
  readonly #entries = new Map<string, Entry>();

  constructor(readonly capacity: number) {}

  /**
   * The held write of `raw` (with `body`, an object, and `idempotent`, its Idempotency-Key if it has
   * one) under `scope`, its body checked by `check`; or the one `compile` makes, when none is held or
   * the body sets other fields than the held one's (or, `check` returning null, is not to be held).
   */
  write(
    raw: RawRequest,
    scope: Scope | undefined,
    body: Readonly<Record<string, unknown>>,
    idempotent: IdempotencyKey | null,
    check: () => CheckedBody | null,
    compile: () => CompiledWrite,
  ): CompiledWrite {
    const head = shapeHead(raw, scope, WRITE_HEADERS);
    const shape = this.capacity === 0 ? null : heldShape(raw, head);
    if (!shape) return compile();
    // The body's keys as given (their order changes nothing but the key), and whether a key comes with it.
    const key = `${head}\n${idempotent ? 'k' : '-'}${JSON.stringify(Object.keys(body))}\n${shape.text}`;
    const values = scopeValues(scope);
    const held = takeRecent(this.#entries, key);
    if (!held) {
      const made = compile();
      this.#hold(key, made, shape, values, idempotent);
      return made;
    }
    // As the planner: the filters' values, then the body.
    const params = bind(held.statement, values, held.slots, shape);
    const checked = check();
    // A body setting other fields (a key that is not one, a record named) compiles anew.
    const { fields } = held.plan;
    if (!checked || checked.fields.length !== fields.length || checked.fields.some((f, i) => f !== fields[i])) {
      return compile();
    }
    const { text, claimedTenants } = checked;
    const bound = boundValues(text, claimedTenants, idempotent);
    for (const [name, at] of held.statement.named ?? []) params[at] = bound[name]!;
    const plan =
      held.plan.kind === 'update'
        ? { ...held.plan, row: text, claimedTenants }
        : { ...held.plan, rows: text, claimedTenants };
    return { plan, statement: { ...held.statement, params } };
  }

  /**
   * Keeps `made` when each value of the request is where the compiler said: the scope's first, the
   * slots' as a read's, and each named parameter (the body's text, the tenants it names, the key and
   * the request's fingerprint) the request's own. A PATCH by key (an array) or with custom values,
   * and a POST naming other records, compile otherwise and are not held.
   */
  #hold(
    key: string,
    made: CompiledWrite,
    shape: QueryShape,
    values: readonly string[],
    idempotent: IdempotencyKey | null,
  ): void {
    const { plan, statement } = made;
    if (!holdable(plan)) return;
    if (!scopedFirst(statement, values)) return;
    const slots = slotsOf(shape, statement, plan.resource);
    const named = statement.named ?? new Map<string, number>();
    const bound = boundValues(bodyText(plan), plan.claimedTenants, idempotent);
    const placed = [...named].every(([name, at]) => bound[name] !== undefined && statement.params[at] === bound[name]);
    // What the statement does not name, the request must not give: a body's text (a PATCH setting
    // nothing has none), tenants (a resource without tenancy), a key (but on a dry run, which keeps none).
    const complete =
      (named.has(BOUND.row) || (plan.kind === 'update' && plan.fields.length === 0)) &&
      (named.has(BOUND.claimed) || plan.resource.tenant === null) &&
      named.has(BOUND.key) === (idempotent !== null && !plan.rollback) &&
      named.has(BOUND.fingerprint) === named.has(BOUND.key);
    if (!slots || !placed || !complete) return;
    setBounded(this.#entries, key, { plan, statement, slots }, this.capacity);
  }
}
