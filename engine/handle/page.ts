/**
 * Keyset pages of a collection (`keyset` in the registry): `{"data": [...], "next_cursor": ...}`,
 * one statement a page, the cursor an opaque token of the last row's key (keyset.ts).
 */
import { compileKeysetPage } from '../compile/keyset.ts';
import type { Scope } from '../compile/scope.ts';
import { ApiError } from '../errors.ts';
import { cursorError, decodeCursor, encodeCursor, pageLimit } from '../keyset.ts';
import type { Context } from './context.ts';

/** What a keyset page asks for: `limit` (default 50, at most 1000) and the `cursor` of the previous page. */
export interface PageRequest {
  readonly limit?: string | undefined;
  readonly cursor?: string | undefined;
  /** The Consistency-Token of a write the page must show. */
  readonly consistency?: string | undefined;
}

interface KeysetRow {
  authorized: number;
  n: number;
  data: string;
  last_key: string | null;
}

export async function page(
  ctx: Context,
  collection: string,
  request: PageRequest,
  scope: Scope | undefined,
): Promise<string> {
  const row = await ctx.untilAuthorized(scope, async () => {
    const resource = ctx.registry.collection(collection);
    if (!resource?.keyset) {
      const listings = ctx.registry.resources.flatMap((r) => (r.keyset ? [r.collection] : []));
      throw new ApiError('NOT_FOUND', `there is no listing of "${collection}"`, {
        hint: `Listings: ${listings.join(', ')}.`,
      });
    }
    const limit = pageLimit(request.limit);
    const after = request.cursor === undefined ? null : decodeCursor(request.cursor, resource.keyset.length);
    const statement = compileKeysetPage(resource, scope, ctx.scoping, limit, after);
    const source = ctx.readOn(request.consistency);
    const rows = await ctx
      .execute<KeysetRow>(statement.text, statement.params, scope, 'keyset', source)
      .catch((error: ApiError) => {
        throw after === null ? error : cursorError(error);
      });
    return { ...rows[0]!, limit };
  });
  const next = row.n > row.limit && row.last_key !== null ? encodeCursor(row.last_key) : null;
  return `{"data":${row.data},"next_cursor":${JSON.stringify(next)}}`;
}
