/** The statements of built-in tokens (tokens.ts): create, list and revoke, on the engine's token table. */
import type { Tenancy } from '../registry/index.ts';
import { TOKEN_ACTIVE } from './scope.ts';
import { type CompiledStatement, ident, Params } from './sql.ts';

/** A new token's row: its tenant, name, hash and expiry in days (null: none); returns its id. */
export function createToken(
  table: string,
  tenancy: Tenancy,
  token: { tenant: string; name: string | null; hash: string; expiresInDays: number | null },
): CompiledStatement {
  const p = new Params();
  const days = token.expiresInDays === null ? null : String(token.expiresInDays);
  const text =
    `INSERT INTO ${ident(table)} (${ident(tenancy.column)}, "name", "token_hash", "expires_at")` +
    ` VALUES (${p.add(token.tenant, tenancy.type.sql)}, ${p.add(token.name, 'text')}, ${p.add(token.hash, 'text')},` +
    ` now() + make_interval(days => ${p.add(days, 'int4')})) RETURNING "id"::text AS id`;
  return { text, params: p.values };
}

/** The tokens of a tenant, or of every tenant: never the tokens themselves, which are not stored. */
export function listTokens(table: string, tenancy: Tenancy, tenant: string | null): CompiledStatement {
  const p = new Params();
  const column = ident(tenancy.column);
  const where = tenant === null ? '' : ` WHERE ${column} = ${p.add(tenant, tenancy.type.sql)}`;
  const text =
    `SELECT "id"::text AS id, ${column}::text AS tenant, "name", ${iso('created_at')}, ${iso('expires_at')},` +
    ` ${iso('revoked_at')}, ${TOKEN_ACTIVE} AS active` +
    ` FROM ${ident(table)}${where}` +
    ' ORDER BY "created_at", "id"';
  return { text, params: p.values };
}

/** A timestamp column as ISO 8601 text, as JSON renders it (`2026-11-27T15:25:41.469+00:00`). */
function iso(column: string): string {
  return `to_json(${ident(column)}) #>> '{}' AS ${ident(column)}`;
}

/** Revokes a token by id, unless it is revoked already; returns its id when it was revoked now. */
export function revokeToken(table: string, id: string): CompiledStatement {
  const p = new Params();
  const text =
    `UPDATE ${ident(table)} SET "revoked_at" = now() WHERE "id" = ${p.add(id, 'uuid')}` +
    ' AND "revoked_at" IS NULL RETURNING "id"';
  return { text, params: p.values };
}
