/** GET and HEAD on a resource: parse, plan and compile (or the read cache), one statement, respond. */
import { compileCountEstimate, compileRead } from '../compile/read.ts';
import type { Scope } from '../compile/scope.ts';
import { namedField } from '../db/errors.ts';
import type { Database } from '../db/port.ts';
import { CONSISTENCY_HEADER } from '../parse/headers.ts';
import { parseRequest, type RawRequest } from '../parse/index.ts';
import { parseEntityTags } from '../parse/preconditions.ts';
import { planRead } from '../plan/read.ts';
import type { ReadPlan } from '../plan/types.ts';
import { type EngineResponse, respondRead } from '../respond.ts';
import { type RowShape, rowsBody } from '../row-json.ts';
import { CHANGE_POSITION_HEADER, formatPosition, fromSnapshot } from '../streams/position.ts';
import type { StageClock } from '../timings.ts';
import type { Context } from './context.ts';

/** The one row a read (or a call) answers. */
export interface ReadRow {
  authorized: number;
  /** The tenant the scope resolved to: the one an estimate is asked for. */
  tenant: string | null;
  page_total: number;
  total: string | null;
  body: string | null;
  /** A singular read's version (compile/version.ts), for its ETag. */
  version: string | null;
  /** The snapshot the read saw, on a resource with changes (its Change-Position). */
  snapshot?: string | null;
  /** Where Node builds the body: the row's place in the page, null on the row of an empty page. */
  n?: string | number | null;
}

/**
 * The one row of a read whose page Node builds: its first columns, and the body from the page's
 * rows (none when the page is empty: one row then carries the first columns alone).
 */
function pageOf(shape: RowShape, rows: readonly ReadRow[], single: boolean): ReadRow {
  const page = rows[0]!.n === null ? [] : rows;
  return { ...rows[0]!, page_total: page.length, body: rowsBody(shape, page, single) };
}

/** A read's plan and statement: parse, plan and compile (the read cache's miss). */
export function compileReadRequest(ctx: Context, raw: RawRequest, scope: Scope | undefined, clock?: StageClock) {
  const resource = ctx.resourceFor(raw.resource, raw.method);
  const request = parseRequest({ ...raw, method: raw.method as 'GET' | 'HEAD' });
  clock?.lap('parse');
  const plan = planRead(resource, request, ctx.maxRows);
  clock?.lap('plan');
  const statement = compileRead(plan, scope, ctx.scoping, { nodeJson: ctx.nodeJson });
  clock?.lap('compile');
  return { plan, statement };
}

/** The planner's estimate of the rows a read's filters select in the caller's tenant. */
async function estimateCount(
  ctx: Context,
  plan: ReadPlan,
  tenant: string | null,
  scope: Scope | undefined,
  on: Database,
): Promise<number> {
  const statement = compileCountEstimate(plan, tenant, ctx.registry.tenant);
  const [row] = await ctx.execute<{ 'QUERY PLAN': unknown }>(statement.text, statement.params, scope, 'estimate', on);
  const raw = row?.['QUERY PLAN'];
  const parsed = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Array<{ Plan: { 'Plan Rows': number } }>;
  return Math.round(parsed[0]?.Plan['Plan Rows'] ?? 0);
}

export async function read(
  ctx: Context,
  raw: RawRequest,
  scope: Scope | undefined,
  clock?: StageClock,
): Promise<EngineResponse> {
  let source = ctx.db;
  const { plan, row } = await ctx.untilAuthorized(scope, async () => {
    source = ctx.readOn(raw.header(CONSISTENCY_HEADER));
    let hit = true;
    const { plan, statement } = ctx.reads.read(raw, scope, () => {
      hit = false;
      return compileReadRequest(ctx, raw, scope, clock);
    });
    ctx.observer?.onCache?.(hit);
    // A cached read spends its time finding its statement: parse, as nothing else is left.
    if (hit) clock?.lap('parse');
    const rows = await ctx
      .execute<ReadRow>(statement.text, statement.params, scope, 'read', source)
      .catch((error: unknown) => Promise.reject(namedField(error, plan.resource.fields, null)));
    clock?.lap('db');
    const row = statement.rows ? pageOf(statement.rows, rows, plan.format === 'object') : rows[0]!;
    ctx.learn(scope, row.tenant);
    return { plan, row, authorized: row.authorized ?? 0 };
  });
  let total = row.total === null ? null : Number(row.total);
  // Counting stops at MAX_ROWS + 1 for `estimated`; past that, and for `planned`, the
  // planner's estimate serves (a second, cheap statement), so large counts cost little.
  if (plan.count === 'planned' || (plan.count === 'estimated' && total === plan.limitOfCount)) {
    // A page that is not full ends the result, so its total is known without an estimate (an
    // empty page past the start only says the total is at most the offset); an estimate is never
    // fewer than the rows counted or shown to exist.
    const ended = row.page_total < plan.limit && (row.page_total > 0 || plan.offset === 0);
    total = ended
      ? plan.offset + row.page_total
      : Math.max(total ?? 0, plan.offset + row.page_total, await estimateCount(ctx, plan, row.tenant, scope, source));
    clock?.lap('db');
  }
  const result = { pageTotal: row.page_total, total, body: row.body, version: row.version };
  const response = respondRead(plan, result, parseEntityTags(raw.header('if-none-match')));
  if (row.snapshot) response.headers[CHANGE_POSITION_HEADER] = formatPosition(fromSnapshot(row.snapshot));
  return ctx.timed(response, clock);
}
