/**
 * The scope of a request from a built-in token: `Authorization: Bearer <token>`. A missing or
 * malformed header is refused here without touching the database; a well-formed token becomes a
 * `{ tokenHash }` scope, which the request's own statement checks (a revoked token stops at once).
 */
import type { Context } from 'hono';
import { setBounded } from '../bounded.ts';
import type { Scope } from '../compile/scope.ts';
import { bearerRefused } from '../errors.ts';
import { tokenScope } from '../tokens.ts';

export interface BearerTokenOptions {
  /** What a caller without a usable header is told to do, such as how to get a token. */
  readonly hint?: string;
}

/** How many Authorization headers' scopes a `bearerToken` keeps (the oldest goes first). */
const KNOWN_HEADERS = 1000;

/**
 * @example
 * engageApp({ engine, scope: bearerToken({ hint: 'Create a token with `acme token create`.' }) })
 */
export function bearerToken(options: BearerTokenOptions = {}): (c: Context) => Scope {
  const refuse = (message: string) => bearerRefused(message, options.hint);
  /**
   * The scopes of the headers seen lately, so a caller's token is hashed once rather than on each of
   * its requests. Only the hash is a scope's: whether the token is valid is still the statement's.
   */
  const known = new Map<string, Scope>();
  return function bearerToken(c) {
    const header = c.req.header('authorization');
    if (!header) throw refuse('this request needs an Authorization header with a bearer token');
    const seen = known.get(header);
    if (seen) return seen;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw refuse('the Authorization header must be "Bearer <token>"');
    const scope = tokenScope(match[1]!);
    if (!scope) throw refuse('the bearer token is not valid');
    setBounded(known, header, scope, KNOWN_HEADERS);
    return scope;
  };
}
