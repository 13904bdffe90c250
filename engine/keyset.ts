/**
 * Keyset pages (docs/v1.md): a resource's rows in the order of its keyset
 * fields (a registry option, such as `created_at, id`), the cursor an opaque token of the last
 * row's key, so a walk sees every row once even while rows are inserted.
 */
import { ApiError } from './errors.ts';

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 1000;

const badCursor = () =>
  new ApiError(
    'INVALID_QUERY',
    'cursor is not one this API gave out; pass next_cursor from the previous page unchanged',
  );

/** The cursor of a page that ends at `key` (the last row's keyset values as a JSON array of text). */
export const encodeCursor = (key: string): string => Buffer.from(key).toString('base64url');

/** The key values a cursor holds: `size` strings, or a 400. Values that do not fit their fields are refused later. */
export function decodeCursor(cursor: string, size: number): string[] {
  try {
    const key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(key) && key.length === size && key.every((v) => typeof v === 'string')) return key;
  } catch {
    // Reported below.
  }
  throw badCursor();
}

/** A value of a cursor that its field's type refused: the cursor was not ours. */
export const cursorError = (error: ApiError): ApiError => (error.code === 'INVALID_QUERY' ? badCursor() : error);

export function pageLimit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_LIMIT;
  if (!/^\d{1,4}$/.test(value) || Number(value) < 1 || Number(value) > MAX_LIMIT) {
    throw new ApiError('INVALID_QUERY', `limit must be a whole number from 1 to ${MAX_LIMIT}, not "${value}"`);
  }
  return Number(value);
}
