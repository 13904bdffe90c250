/**
 * The `engage-version` header (docs/contract.md section 7): absent means the current version, an
 * unsupported value is a 400 listing the supported ones, and every response says which was used.
 * Two steps, because authentication is decided between them: every response carries the header, a
 * 401 included, and the value is checked once the caller is known.
 */

import { adapterHeaders } from '@engage/engine/hono';
import type { Context, MiddlewareHandler } from 'hono';
import { appError } from './errors.ts';

export const VERSION_HEADER = 'engage-version';
/** The values the header takes; the first is the current one. */
export const SUPPORTED_VERSIONS = ['2026-11-01'] as const;
export const CURRENT_VERSION = SUPPORTED_VERSIONS[0];

const requested = (header: string | undefined): string => (header === undefined ? CURRENT_VERSION : header.trim());
const supported = (version: string): boolean => (SUPPORTED_VERSIONS as readonly string[]).includes(version);

/** The version in use: the request's, or the current one when it is absent or unsupported. */
export function echoedVersion(c: Context): string {
  const version = requested(c.req.header(VERSION_HEADER));
  return supported(version) ? version : CURRENT_VERSION;
}

/**
 * Echoes the version in use on the responses the engine's adapter did not make (it is given
 * `echoedVersion` as a header of its own, without the web Headers object this costs).
 */
export function versionHeader(): MiddlewareHandler {
  return async function versionHeader(c, next) {
    await next();
    if (adapterHeaders(c) === undefined) c.res.headers.set(VERSION_HEADER, echoedVersion(c));
  };
}

/** Refuses an unsupported version with 400 INVALID_VERSION_HEADER. */
export function checkVersion(c: Context): void {
  const asked = c.req.header(VERSION_HEADER);
  if (!supported(requested(asked))) {
    throw appError('INVALID_VERSION_HEADER', `"${asked}" is not a supported ${VERSION_HEADER}`, {
      hint: `Supported values: ${SUPPORTED_VERSIONS.join(', ')}; leave the header out for the current one.`,
    });
  }
}

/** checkVersion as middleware, for routes outside the engine's adapter. */
export function requireVersion(): MiddlewareHandler {
  return async function requireVersion(c, next) {
    checkVersion(c);
    await next();
  };
}
