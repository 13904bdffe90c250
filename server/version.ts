/**
 * The `engage-version` header (decisions.md section 7): absent means the current version, an
 * unsupported value is a 400 listing the supported ones, and every response says which was used.
 */
import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../engine/errors.ts';
import { CURRENT_VERSION, SUPPORTED_VERSIONS, VERSION_HEADER } from '../engine/versions.ts';


export function apiVersion(): MiddlewareHandler {
  return async function apiVersion(c, next) {
    const asked = c.req.header(VERSION_HEADER);
    const version = asked === undefined ? CURRENT_VERSION : asked.trim();
    c.header(VERSION_HEADER, CURRENT_VERSION);
    if (!(SUPPORTED_VERSIONS as readonly string[]).includes(version)) {
      throw new ApiError('INVALID_VERSION_HEADER', `"${asked}" is not a supported ${VERSION_HEADER}`, {
        hint: `Supported values: ${SUPPORTED_VERSIONS.join(', ')}; leave the header out for the current one.`,
        headers: { [VERSION_HEADER]: CURRENT_VERSION },
      });
    }
    c.header(VERSION_HEADER, version);
    await next();
  };
}
