/** POST, PUT, PATCH and DELETE on a resource: parse, plan and compile, one statement, respond. */

import type { KeyState } from '../compile/idempotency.ts';
import type { Scope } from '../compile/scope.ts';
import { compileWrite } from '../compile/write.ts';
import { namedField } from '../db/errors.ts';
import { ApiError } from '../errors.ts';
import { parseJsonBody } from '../parse/body.ts';
import { IDEMPOTENCY_HEADER, parseIdempotencyKey } from '../parse/idempotency.ts';
import { parseRequest, type RawRequest } from '../parse/index.ts';
import { isObject } from '../plan/body.ts';
import type { WritePlan } from '../plan/types.ts';
import { checkInsertBody, checkUpdateBody, planDelete, planInsert, planPut, planUpdate } from '../plan/write.ts';
import { type EngineResponse, respondWrite } from '../respond.ts';
import type { StageClock } from '../timings.ts';
import type { Written } from './batch.ts';
import type { Context } from './context.ts';
import { type Idempotency, replayed } from './idempotency.ts';

export type WriteRequest = RawRequest & { readonly method: 'POST' | 'PUT' | 'PATCH' | 'DELETE' };

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

/** A write's body, parsed once for whichever step asks first (a failure is parsed again, to be told). */
function bodyOf(raw: WriteRequest): () => unknown {
  let parsed: { readonly value: unknown } | undefined;
  // DELETE takes no body; POST, PUT and PATCH take JSON.
  const parse = () => (raw.method === 'DELETE' ? null : parseJsonBody(raw.body ?? null, raw.header('content-type')));
  return () => {
    parsed ??= { value: parse() };
    return parsed.value;
  };
}

/**
 * A write's plan and statement: parse, plan and compile. With `idempotency`, a write sent with an
 * Idempotency-Key (and not a dry run) compiles to a statement that runs it once per key.
 */
export function compileWriteRequest(
  ctx: Context,
  raw: WriteRequest,
  scope: Scope | undefined,
  clock?: StageClock,
  idempotency: Idempotency | null = null,
  bodyOfRaw: () => unknown = bodyOf(raw),
) {
  const resource = ctx.resourceFor(raw.resource, raw.method);
  const request = parseRequest(raw);
  const schemas = ctx.schemas(resource);
  const given = idempotency && parseIdempotencyKey(raw.header(IDEMPOTENCY_HEADER));
  const body = bodyOfRaw();
  clock?.lap('parse');
  const plan =
    raw.method === 'DELETE'
      ? planDelete(resource, request, ctx.maxRows)
      : raw.method === 'POST'
        ? planInsert(resource, (r) => ctx.schemas(r), request, body, ctx.maxRows)
        : raw.method === 'PUT'
          ? planPut(resource, (r) => ctx.schemas(r), request, body, ctx.maxRows, ctx.allow(resource))
          : planUpdate(resource, schemas, request, body, ctx.maxRows);
  clock?.lap('plan');
  // A dry run writes nothing, so it has nothing to do once.
  const key =
    given && !plan.rollback
      ? idempotency.key(given, raw.method, `${raw.resource}?${raw.query}`, raw.body ?? null)
      : null;
  const statement = compileWrite(plan, scope, ctx.scoping, key ?? undefined);
  clock?.lap('compile');
  return { plan, statement, key };
}

/**
 * A PATCH or POST of one object through the write cache (write-cache.ts), with its Idempotency-Key
 * if it has one; null for any other write, and for a body or key that does not parse
 * (compileWriteRequest tells what is wrong in the order the parser finds it).
 */
function heldWrite(
  ctx: Context,
  raw: WriteRequest,
  scope: Scope | undefined,
  clock: StageClock | undefined,
  idempotency: Idempotency | null,
  bodyOfRaw: () => unknown,
) {
  if (raw.method !== 'PATCH' && raw.method !== 'POST') return null;
  const resource = ctx.resourceFor(raw.resource, raw.method);
  if (resource.customFields) return null;
  let given: string | null;
  let body: unknown;
  try {
    given = idempotency && parseIdempotencyKey(raw.header(IDEMPOTENCY_HEADER));
    body = bodyOfRaw();
  } catch {
    return null;
  }
  if (!isObject(body)) return null;
  const key = given ? idempotency!.key(given, raw.method, `${raw.resource}?${raw.query}`, raw.body ?? null) : null;
  let hit = true;
  const made = ctx.writes.write(
    raw,
    scope,
    body,
    key,
    () => {
      const schemas = ctx.schemas(resource);
      if (raw.method === 'PATCH') {
        const checked = checkUpdateBody(resource, schemas, body);
        return { ...checked, text: JSON.stringify(checked.row) };
      }
      const checked = checkInsertBody(resource, schemas, body);
      return checked && { ...checked, text: JSON.stringify(checked.rows) };
    },
    () => {
      hit = false;
      return compileWriteRequest(ctx, raw, scope, clock, idempotency, bodyOfRaw);
    },
  );
  // A held write spends its time checking its body and binding it.
  if (hit) clock?.lap('parse');
  // A dry run writes nothing, so it keeps no key (as compileWriteRequest decides).
  return { ...made, key: made.plan.rollback ? null : key };
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

/**
 * `idempotency`: with idempotency keys, a write sent with a key runs once per key (handle/idempotency.ts).
 * `seen` is told which row it wrote (a batch's reference to it).
 */
export async function write(
  ctx: Context,
  raw: WriteRequest,
  scope: Scope | undefined,
  idempotency: Idempotency | null,
  clock?: StageClock,
  seen?: (written: Written) => void,
): Promise<EngineResponse> {
  const { plan, row, earlier } = await ctx.untilAuthorized(scope, async () => {
    // A body the cache does not hold (an array, one naming records) is compiled without parsing it again.
    const body = bodyOf(raw);
    const { plan, statement, key } =
      heldWrite(ctx, raw, scope, clock, idempotency, body) ??
      compileWriteRequest(ctx, raw, scope, clock, idempotency, body);
    // One statement is atomic by itself; `Prefer: tx=rollback` needs a transaction to undo it.
    const [row] = await (plan.rollback
      ? ctx.dryRun<WriteRow>(statement.text, statement.params, scope)
      : ctx.execute<WriteRow & KeyState>(statement.text, statement.params, scope, 'write')
    ).catch((error: unknown) => Promise.reject(namedField(error, plan.resource.fields, raw.body ?? null)));
    clock?.lap('db');
    ctx.learn(scope, row?.tenant);
    const authorized = row?.authorized ?? 0;
    // What the first request with the key stored, when this one is a retry of it.
    const earlier = key && authorized === 1 ? idempotency!.stored(key, row as WriteRow & KeyState) : null;
    return { plan, row: row!, earlier, authorized };
  });
  const response =
    earlier === null ? respond(ctx, plan, row) : replayed(respond(ctx, plan, JSON.parse(earlier) as WriteRow));
  seen?.({
    resource: plan.resource.name,
    location: row.location === null ? null : (JSON.parse(row.location) as unknown[]),
    affected: row.affected,
  });
  return ctx.timed(plan.rollback ? response : await ctx.withPosition(response), clock);
}
