/** A call of a database function (`/rpc/<name>`): parse, plan and compile, one statement, respond. */
import { compileCall } from '../compile/call.ts';
import type { Scope } from '../compile/scope.ts';
import { namedField } from '../db/errors.ts';
import { ApiError } from '../errors.ts';
import { contentType, JSON_MEDIA } from '../media-types.ts';
import { parseJsonBody } from '../parse/body.ts';
import { CONSISTENCY_HEADER } from '../parse/headers.ts';
import { parseRequest, type RawRequest } from '../parse/index.ts';
import { planCall } from '../plan/call.ts';
import type { RegistryFunction } from '../registry/functions.ts';
import { type EngineResponse, respondRead } from '../respond.ts';
import type { StageClock } from '../timings.ts';
import type { Context } from './context.ts';
import type { ReadRow } from './read.ts';

/** The methods a function answers: GET and HEAD only when it changes nothing. */
export const callMethods = (fn: RegistryFunction): string[] =>
  fn.readOnly ? ['GET', 'HEAD', 'POST', 'OPTIONS'] : ['POST', 'OPTIONS'];

/** The function `name` names; 404 listing the functions, or 405 for a method it does not answer. */
function functionFor(ctx: Context, name: string, method: string): RegistryFunction {
  const fn = ctx.registry.function(name);
  if (!fn) {
    const known = ctx.registry.functions.map((f) => f.name);
    throw new ApiError('NOT_FOUND', `there is no function "${name}"`, {
      hint: known.length ? `Functions: ${known.join(', ')}.` : 'No function is served here.',
    });
  }
  const allowed = callMethods(fn);
  if (!allowed.includes(method)) {
    const why = fn.readOnly ? '' : ', as it may change data';
    throw new ApiError('METHOD_NOT_ALLOWED', `${name} answers ${allowed.join(', ')}${why}, not ${method}`, {
      headers: { Allow: allowed.join(', ') },
    });
  }
  return fn;
}

export async function call(
  ctx: Context,
  name: string,
  raw: RawRequest,
  scope: Scope | undefined,
  clock?: StageClock,
): Promise<EngineResponse> {
  if (raw.method === 'OPTIONS') {
    const { fn } = await ctx.untilAuthorized(scope, async () => ({
      fn: functionFor(ctx, name, raw.method),
      authorized: (await ctx.authorize(scope)) === null ? 0 : 1,
    }));
    return { status: 200, headers: { Allow: callMethods(fn).join(', ') }, body: null };
  }
  const { plan, row, fn } = await ctx.untilAuthorized(scope, async () => {
    const fn = functionFor(ctx, name, raw.method);
    const method = raw.method as 'GET' | 'HEAD' | 'POST';
    // The query string holds arguments beside filters: the plan tells them apart and parses the rest.
    const request = parseRequest({ ...raw, method, query: '' });
    const body = method === 'POST' && raw.body ? parseJsonBody(raw.body, raw.header('content-type')) : null;
    clock?.lap('parse');
    const plan = planCall(fn, request, raw.query, body, ctx.maxRows);
    clock?.lap('plan');
    const statement = compileCall(plan, scope, ctx.scoping, { nodeJson: false });
    clock?.lap('compile');
    // A call that changes nothing may run on a replica, as a read does.
    const on = fn.readOnly ? ctx.readOn(raw.header(CONSISTENCY_HEADER)) : ctx.db;
    const run = plan.rollback
      ? ctx.dryRun<ReadRow>(statement.text, statement.params, scope, 'write')
      : ctx.execute<ReadRow>(statement.text, statement.params, scope, fn.readOnly ? 'read' : 'write', on);
    const [row] = await run.catch((error: unknown) =>
      Promise.reject(namedField(error, plan.read?.resource.fields ?? [], raw.body ?? null)),
    );
    clock?.lap('db');
    ctx.learn(scope, row!.tenant);
    return { plan, row: row!, fn, authorized: row!.authorized };
  });
  const total = row.total === null ? null : Number(row.total);
  if (plan.read) {
    const result = { pageTotal: row.page_total, total: plan.read.count ? total : null, body: row.body, version: null };
    return ctx.timed(respondRead(plan.read, result), clock);
  }
  if (fn.returns.kind === 'void') return ctx.timed({ status: 204, headers: {}, body: null }, clock);
  const counted = plan.request.preferences.count ? String(total) : '*';
  const headers: Record<string, string> = {
    'Content-Type': contentType(JSON_MEDIA),
    'Content-Range': `${row.page_total > 0 ? `0-${row.page_total - 1}` : '*'}/${counted}`,
  };
  return ctx.timed({ status: 200, headers, body: raw.method === 'HEAD' ? null : row.body }, clock);
}
