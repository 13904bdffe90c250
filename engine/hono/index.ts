/**
 * `@engage/engine/hono`: the engine served by a Hono app, mounted wherever the host likes
 * (`host.route('/crm', engageApp(...))`), or served alone (`engageApp(...).fetch`). Its helpers
 * serve a host's routes beside it the same way: bodies within a limit, errors in the contract's body.
 */
export { type EngageAppOptions, engageApp } from './app.ts';
export { type BearerTokenOptions, bearerToken } from './bearer.ts';
export { BODY_LIMIT, bodyUnread, limitDeclaredBody, readText } from './body.ts';
export { errorBody, renderError } from './errors.ts';
export { type RateLimitOptions, rateLimit } from './rate-limit.ts';
export { adapterHeaders, identify } from './response.ts';
