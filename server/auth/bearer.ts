/**
 * Bearer authentication. A well-formed token becomes the request's tenant scope; the engine checks
 * it against api_token inside the request's own statement (see engine/compile/scope.ts).
 * A missing or malformed header is refused here without touching the database.
 */
import type { MiddlewareHandler } from 'hono';
import { unauthorized as engineUnauthorized, type Scope } from '../../engine/index.ts';
import { hashToken, isWellFormedToken } from './tokens.ts';

/** `organisationId` and `errorCode`: set once known, for the access log. */
export type AuthVariables = { scope: Scope; requestId: string; organisationId?: string; errorCode?: string };

const HINT =
  'Send "Authorization: Bearer <token>"; create a token with `npm run token -- create --organisation <uuid>`.';

/** 401 with a hint on how to get a token; the message defaults to the engine's. */
export const unauthorized = (message?: string) => engineUnauthorized(message, HINT);

export function bearerAuth(): MiddlewareHandler<{ Variables: AuthVariables }> {
  return async function bearerAuth(c, next) {
    const header = c.req.header('authorization');
    if (!header) throw unauthorized('this request needs an Authorization header with a bearer token');
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw unauthorized('the Authorization header must be "Bearer <token>"');
    if (!isWellFormedToken(match[1]!)) throw unauthorized('the bearer token is not valid');
    c.set('scope', { tokenHash: hashToken(match[1]!) });
    await next();
  };
}
