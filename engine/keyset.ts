/**
 * Keyset pages (decisions.md section 8, `GET /v1/contacts`): ordered by (created_at, id), the
 * cursor an opaque token of the last row's key, so a walk sees every row once even while rows
 * are inserted. The rows' JSON is built by PostgreSQL and passed through.
 */

import { SCOPED, type Scope, scopeCte } from './compile/scope.ts';
import { ident, Params } from './compile/sql.ts';
import type { Queryable } from './db/port.ts';
import { ApiError, unauthorized } from './errors.ts';
import { UUID } from './plan/values.ts';
import type { Resource } from './registry.ts';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 1000;

const CREATED_AT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/;

const encode = (createdAt: string, id: string) => Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');

function decode(cursor: string): [string, string] {
  try {
    const key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    // Our own key: PostgreSQL's timestamptz text and a uuid.
    if (
      Array.isArray(key) &&
      key.length === 2 &&
      typeof key[0] === 'string' &&
      typeof key[1] === 'string' &&
      CREATED_AT.test(key[0]) &&
      UUID.test(key[1])
    ) {
      return key as [string, string];
    }
  } catch {
    // Reported below.
  }
  throw new ApiError(
    'INVALID_QUERY',
    'cursor is not one this API gave out; pass next_cursor from the previous page unchanged',
  );
}

export function pageLimit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_LIMIT;
  if (!/^\d{1,4}$/.test(value) || Number(value) < 1 || Number(value) > MAX_LIMIT) {
    throw new ApiError('INVALID_QUERY', `limit must be a whole number from 1 to ${MAX_LIMIT}, not "${value}"`);
  }
  return Number(value);
}

/** `{"data": [...], "next_cursor": "..." | null}` as text. */
export async function keysetPage(
  q: Queryable,
  resource: Resource,
  scope: Scope,
  limit: number,
  cursor: string | undefined,
): Promise<string> {
  const params = new Params();
  const cte = scopeCte(scope, params);
  let after = '';
  if (cursor !== undefined) {
    const [createdAt, id] = decode(cursor);
    after = ` AND (t."created_at", t."id") > (${params.add(createdAt, 'timestamptz')}, ${params.add(id, 'uuid')})`;
  }
  const columns = resource.fields.map((f) => `t.${ident(f.name)}`).join(', ');
  // One row more than the page tells whether there is a next page.
  const rows = await q.query<{
    authorized: number;
    data: string;
    n: number;
    last_created: string | null;
    last_id: string | null;
  }>(
    `${cte}, page AS (SELECT ${columns}, row_number() OVER (ORDER BY t."created_at", t."id") AS n FROM ${ident(resource.table)} t` +
      ` WHERE t."organisation_id" = ${SCOPED}${after} ORDER BY t."created_at", t."id" LIMIT ${params.add(String(limit + 1), 'int8')})` +
      ` SELECT (SELECT count(*) FROM scope)::int4 AS authorized, (SELECT count(*) FROM page)::int4 AS n,` +
      ` (SELECT coalesce(json_agg(p ORDER BY p."created_at", p."id"), '[]') FROM (SELECT ${resource.fields.map((f) => ident(f.name)).join(', ')} FROM page WHERE n <= ${params.add(String(limit), 'int8')}) p)::text AS data,` +
      ` (SELECT "created_at"::text FROM page WHERE n = ${params.add(String(limit), 'int8')}) AS last_created,` +
      ` (SELECT "id"::text FROM page WHERE n = ${params.add(String(limit), 'int8')}) AS last_id`,
    params.values,
  );
  const row = rows[0];
  if (row?.authorized !== 1) throw unauthorized();
  const next = row.n > limit && row.last_created && row.last_id ? encode(row.last_created, row.last_id) : null;
  return `{"data":${row.data},"next_cursor":${JSON.stringify(next)}}`;
}
