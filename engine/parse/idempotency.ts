/**
 * The `Idempotency-Key` request header (draft-ietf-httpapi-idempotency-key-header): a string the
 * client makes unique per write, sent again unchanged with each retry. The draft's form is a
 * quoted string; the bare form Stripe and most clients send is taken as well.
 */
import { createHash } from 'node:crypto';
import { ApiError } from '../errors.ts';

export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** Marks a response that was stored with its key and is sent again. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

const MAX_LENGTH = 255;

/** Printable ASCII without quotes or backslashes: what a quoted string holds without escapes. */
const KEY = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/;

/** A request's key; null without the header. */
export function parseIdempotencyKey(header: string | null | undefined): string | null {
  if (header === undefined || header === null) return null;
  const trimmed = header.trim();
  const key = trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"') ? trimmed.slice(1, -1) : trimmed;
  if (key.length === 0 || key.length > MAX_LENGTH || !KEY.test(key)) {
    throw new ApiError(
      'INVALID_IDEMPOTENCY_KEY',
      `an Idempotency-Key is 1 to ${MAX_LENGTH} printable ASCII characters without quotes or backslashes`,
      { hint: 'Send a fresh UUID per write, and the same one with each retry of that write.' },
    );
  }
  return key;
}

/**
 * What makes two requests with one key the same request: method, target and body. Headers are left
 * out, so a retry may differ in its token's rotation, tracing or Prefer (it gets the first response).
 */
export function fingerprint(method: string, target: string, body: string | null): string {
  return createHash('sha256')
    .update(`${method} ${target}\n`)
    .update(body ?? '')
    .digest('base64url');
}
