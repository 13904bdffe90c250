/** POST, PATCH and DELETE on a resource: parse, plan and compile, one statement, respond. */
import type { Scope } from '../compile/scope.ts';
import { compileWrite } from '../compile/write.ts';
import type { Queryable, Row } from '../db/port.ts';
import { ApiError } from '../errors.ts';
import { parseJsonBody } from '../parse/body.ts';
import { fingerprint, IDEMPOTENCY_HEADER, parseIdempotencyKey } from '../parse/idempotency.ts';
import { parseRequest, type RawRequest } from '../parse/index.ts';
import type { WritePlan } from '../plan/types.ts';
import { planDelete, planInsert, planUpdate } from '../plan/write.ts';
import { type EngineResponse, respondWrite } from '../respond.ts';
import type { StageClock } from '../timings.ts';
import type { Context } from './context.ts';
import type { RunOnce } from './idempotency.ts';

export type WriteRequest = RawRequest & { readonly method: 'POST' | 'PATCH' | 'DELETE' };

interface WriteRow {
  authorized: number;
  /** The tenant the scope resolved to. */
  tenant: string | null;
  allowed: number;
  affected: number;
  inserted: number;
  /** The written row's key values as a JSON array, when one row was written. */
  location: string | null;
  body: string | null;
  /** The written row's version, when one row was written and the resource has versions. */
  version: string | null;
}

/** A write's plan and statement: parse, plan and compile. */
export function compileWriteRequest(ctx: Context, raw: WriteRequest, scope: Scope | undefined, clock?: StageClock) {
  const resource = ctx.resourceFor(raw.resource, raw.method);
  const request = parseRequest(raw);
  const schemas = ctx.schemas(resource);
  // DELETE takes no body; POST and PATCH take JSON.
  const body = raw.method === 'DELETE' ? null : parseJsonBody(raw.body ?? null, raw.header('content-type'));
  clock?.lap('parse');
  const plan =
    raw.method === 'DELETE'
      ? planDelete(resource, request, ctx.maxRows)
      : raw.method === 'POST'
        ? planInsert(resource, (r) => ctx.schemas(r), request, body, ctx.maxRows)
        : planUpdate(resource, schemas, request, body, ctx.maxRows);
  clock?.lap('plan');
  const statement = compileWrite(plan, scope, ctx.scoping);
  clock?.lap('compile');
  return { plan, statement };
}

/** A write's response, once its statement ran for a valid scope. */
function respond(ctx: Context, plan: WritePlan, row: WriteRow): EngineResponse {
  if (row.allowed !== 1) {
    const { tenancy } = ctx.scoping;
    const noun = tenancy?.noun ?? 'tenant';
    throw new ApiError('FORBIDDEN', `the body names another ${noun}; a request acts for its own ${noun} only`, {
      hint: `Leave ${tenancy?.column ?? 'the tenant'} out of the body: it is the caller's own.`,
    });
  }
  return respondWrite(plan, {
    affected: row.affected,
    inserted: row.inserted,
    location: row.location === null ? null : (JSON.parse(row.location) as unknown[]),
    body: row.body,
    version: row.version,
  });
}

/** `once`: with idempotency keys, runs a write sent with a key once per key (handle/idempotency.ts). */
export async function write(
  ctx: Context,
  raw: WriteRequest,
  scope: Scope | undefined,
  once: RunOnce | null,
  clock?: StageClock,
): Promise<EngineResponse> {
  const { plan, response } = await ctx.untilAuthorized(scope, async () => {
    const key = once && parseIdempotencyKey(raw.header(IDEMPOTENCY_HEADER));
    const { plan, statement } = compileWriteRequest(ctx, raw, scope, clock);
    const run = async (tx?: Queryable) => {
      // One statement is atomic by itself; `Prefer: tx=rollback` needs a transaction to undo it.
      const [row] = plan.rollback
        ? await ctx.dryRun<WriteRow>(statement.text, statement.params, scope)
        : tx
          ? await ctx.observe('write', () => tx.query<WriteRow & Row>(statement.text, statement.params))
          : await ctx.execute<WriteRow>(statement.text, statement.params, scope, 'write');
      clock?.lap('db');
      ctx.learn(scope, row?.tenant);
      return row!;
    };
    // A dry run writes nothing, so it has nothing to do once.
    if (!key || plan.rollback) {
      const row = await run();
      return { plan, authorized: row.authorized, response: row.authorized === 1 ? respond(ctx, plan, row) : null };
    }
    const request = { key, fingerprint: fingerprint(raw.method, `${raw.resource}?${raw.query}`, raw.body ?? null) };
    // The claim checked the scope in this transaction: the write's own check finds it valid.
    const done = await once!(scope, request, async (tx) => respond(ctx, plan, await run(tx)));
    return { plan, ...done };
  });
  return ctx.timed(plan.rollback ? response! : await ctx.withPosition(response!), clock);
}
