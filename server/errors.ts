/**
 * The application's own error codes, beside the engine's closed list (docs/errors.md): each with
 * its status, and whether a retry may succeed.
 */
import { ApiError, type ApiErrorOptions } from '@engage/engine';

const CODES = {
  /** An `engage-version` header naming no supported version. */
  INVALID_VERSION_HEADER: { status: 400 },
  /** This process is draining before it exits; another one serves the request. */
  SHUTTING_DOWN: { status: 503, transient: true },
} as const;

export const appError = (code: keyof typeof CODES, message: string, options: ApiErrorOptions = {}): ApiError =>
  new ApiError(code, message, { ...options, ...CODES[code] });
