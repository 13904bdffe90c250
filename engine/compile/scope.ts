/**
 * Tenant scope. Every statement starts with a `scope` CTE holding exactly the caller's
 * organisation (or nothing), and every table it touches is filtered by
 * `organisation_id = (SELECT organisation_id FROM scope)`, or by the organisation's parameter when
 * the host gives it. A bearer token is resolved inside the same statement, so authentication costs
 * no extra round trip and a revoked token stops working at once.
 */
import type { Params } from './sql.ts';

export type Scope =
  /** The host already knows the organisation (an embedding server with its own auth). */
  | { readonly organisationId: string }
  /** SHA-256 (hex) of a bearer token, checked against api_token in the statement itself. */
  | { readonly tokenHash: string };

/** The scope's one parameter. A read's statement starts with the scope, so there it is `$1`. */
export const scopeValue = (scope: Scope): string =>
  'organisationId' in scope ? scope.organisationId : scope.tokenHash;

export interface ScopeSql {
  /** `WITH scope AS (...)`: the statement's first words. */
  readonly cte: string;
  /**
   * What every tenant table's organisation_id is compared with. A known organisation is its own
   * parameter: Citus routes a statement whose every table is compared with one to a single shard
   * (docs/scaling.md). A token's organisation is the scope's row (SCOPED).
   */
  readonly scoped: string;
}

/** A token's organisation: the scope's row, resolved by the statement itself. */
const SCOPED = '(SELECT organisation_id FROM scope)';

export function scopeCte(scope: Scope, params: Params): ScopeSql {
  if ('organisationId' in scope) {
    const organisation = params.add(scopeValue(scope), 'uuid');
    return { cte: `WITH scope AS (SELECT ${organisation} AS organisation_id)`, scoped: organisation };
  }
  const cte =
    `WITH scope AS (SELECT organisation_id FROM api_token WHERE token_hash = ${params.add(scopeValue(scope), 'text')}` +
    ' AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now()))';
  return { cte, scoped: SCOPED };
}
