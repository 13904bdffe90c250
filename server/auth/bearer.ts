/**
 * Bearer authentication with the engine's built-in tokens (`bearerToken` of the Hono adapter): a
 * well-formed token becomes the request's scope, which the request's own statement checks against
 * api_token; a missing or malformed header is refused here without touching the database.
 */

import { bearerRefused, type Scope } from '@engage/engine';
import { bearerToken } from '@engage/engine/hono';
import type { MiddlewareHandler } from 'hono';

/** `organisationId` and `errorCode`: set once known, for the access log. */
export type AuthVariables = { scope: Scope; requestId: string; organisationId?: string; errorCode?: string };

const HINT =
  'Send "Authorization: Bearer <token>"; create a token with `npm run token -- create --organisation <uuid>`.';

/** The scope of a request's bearer token; a 401 that says how to get a token otherwise. */
export const bearerScope = bearerToken({ hint: HINT });

/** 401 for a token that is not (or no longer) valid, saying how to get one. */
export const unauthorized = () => bearerRefused(undefined, HINT);

/** Sets the request's scope from its bearer token, for the routes outside the engine's adapter (/v1). */
export function bearerAuth(): MiddlewareHandler<{ Variables: AuthVariables }> {
  return async function bearerAuth(c, next) {
    c.set('scope', bearerScope(c));
    await next();
  };
}
