/**
 * The plan of the statement a request would run (PostgREST's execution plan, `Accept:
 * application/vnd.pgrst.plan+json`): compiled as the request itself is, so the caller's scope is
 * inside it. Writes are only planned, unless `options=analyze` asks to run them: then in a
 * transaction that is always rolled back.
 */
import type { Scope } from '../compile/scope.ts';
import { ApiError } from '../errors.ts';
import type { ExplainRequest } from '../parse/headers.ts';
import type { RawRequest } from '../parse/index.ts';
import type { EngineResponse } from '../respond.ts';
import type { StageClock } from '../timings.ts';
import type { Context } from './context.ts';
import { compileReadRequest } from './read.ts';
import { compileWriteRequest, type WriteRequest } from './write.ts';

export async function explain(
  ctx: Context,
  raw: RawRequest,
  wanted: ExplainRequest,
  scope: Scope | undefined,
  clock?: StageClock,
): Promise<EngineResponse> {
  if (!ctx.planEnabled) {
    throw new ApiError('NOT_ACCEPTABLE', 'statement plans are not served here', {
      hint: "Plans are served where the engine is created with planEnabled (PostgREST's db-plan-enabled).",
    });
  }
  const planned: RawRequest = {
    ...raw,
    header: (name) => (name.toLowerCase() === 'accept' ? wanted.for : raw.header(name)),
  };
  const isWrite = raw.method === 'POST' || raw.method === 'PUT' || raw.method === 'PATCH' || raw.method === 'DELETE';
  const analyze = wanted.options.has('analyze');
  const rows = await ctx.untilAuthorized(scope, async () => {
    const { statement } = isWrite
      ? compileWriteRequest(ctx, { ...planned, method: raw.method as WriteRequest['method'] }, scope, clock)
      : compileReadRequest(ctx, planned, scope, clock);
    // The statement checks the token itself, but a plan does not run it: check it first.
    const authorized = (await ctx.authorize(scope)) === null ? 0 : 1;
    if (authorized === 0) return { authorized, rows: [] };
    const settings = [`FORMAT ${wanted.format.toUpperCase()}`];
    for (const option of ['analyze', 'verbose', 'settings', 'buffers', 'wal'] as const) {
      // WAL needs ANALYZE; without it PostgreSQL refuses the statement.
      if (wanted.options.has(option) && (option !== 'wal' || analyze)) settings.push(option.toUpperCase());
    }
    const text = `EXPLAIN (${settings.join(', ')}) ${statement.text}`;
    const rows =
      isWrite && analyze
        ? await ctx.dryRun<Record<string, unknown>>(text, statement.params, scope, 'explain')
        : await ctx.execute<Record<string, unknown>>(text, statement.params, scope, 'explain');
    clock?.lap('db');
    return { authorized, rows };
  });
  const lines = rows.rows.map((row) => row['QUERY PLAN']);
  const body =
    wanted.format === 'json'
      ? typeof lines[0] === 'string'
        ? (lines[0] as string)
        : JSON.stringify(lines[0] ?? [])
      : lines.join('\n');
  const media = `application/vnd.pgrst.plan+${wanted.format}; for="${wanted.for}"; charset=utf-8`;
  const response: EngineResponse = {
    status: 200,
    headers: { 'Content-Type': media, Vary: 'Accept, Prefer, Range' },
    body: raw.method === 'HEAD' ? null : body,
  };
  return ctx.timed(response, clock);
}
