/**
 * The engine's rate limit (`createEngine({ rateLimit })`) on a host's routes: the IETF RateLimit
 * header fields (draft-ietf-httpapi-ratelimit-headers) on every response, and 429 `RATE_LIMITED`
 * with `Retry-After` past the limit. Without a limit it does nothing and costs nothing.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { Scope } from '../compile/scope.ts';
import type { Engine } from '../engine.ts';
import { ApiError } from '../errors.ts';
import type { RateLimitState } from '../handle/rate-limit.ts';
import { renderError } from './errors.ts';

export interface RateLimitOptions {
  readonly engine: Engine;
  /** Who the caller is, as the routes' own scope says; a request it refuses is left to the routes. */
  readonly scope: (c: Context) => Scope | Promise<Scope>;
}

export function rateLimit(options: RateLimitOptions): MiddlewareHandler {
  const { engine } = options;
  const { limit } = engine;
  if (limit === null) return async (_c, next) => next();
  return async function rateLimit(c, next) {
    let scope: Scope;
    try {
      scope = await options.scope(c);
    } catch {
      return next();
    }
    let state: RateLimitState;
    try {
      state = await limit(scope);
    } catch (error) {
      return renderError(c, await engine.tokenFirst(scope, error));
    }
    const { requests, seconds } = state.policy;
    const headers = {
      'RateLimit-Policy': `"default";q=${requests};w=${seconds}`,
      RateLimit: `"default";r=${state.remaining};t=${state.reset}`,
    };
    if (state.exceeded) {
      const error = new ApiError('RATE_LIMITED', `this caller made more than ${requests} requests in ${seconds} s`, {
        hint: `Wait ${state.reset} s (Retry-After) before the next request.`,
        headers: { ...headers, 'Retry-After': String(state.reset) },
      });
      return renderError(c, await engine.tokenFirst(scope, error));
    }
    await next();
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  };
}
