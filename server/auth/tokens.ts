/**
 * API tokens (docs/contract.md section 4): 256 random bits, shown once, stored only as a SHA-256 hash,
 * optionally expiring, revocable. A token belongs to one organisation.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from '../../engine/index.ts';

const PREFIX = 'engage_';
const TOKEN = /^engage_[A-Za-z0-9_-]{43}$/;

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Whether a string could be one of our tokens; anything else is refused without a query. */
export const isWellFormedToken = (token: string): boolean => TOKEN.test(token);

export interface TokenInfo {
  id: string;
  organisation_id: string;
  name: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
}

export interface CreateTokenOptions {
  organisationId: string;
  name?: string | undefined;
  expiresInDays?: number | undefined;
}

/** Creates the token, and its organisation if it does not exist yet. Returns the token once. */
export async function createToken(db: Queryable, options: CreateTokenOptions): Promise<{ id: string; token: string }> {
  const days = options.expiresInDays;
  if (days !== undefined && !(Number.isInteger(days) && days >= 1))
    throw new RangeError('expiresInDays must be a whole number of days, at least 1');
  const token = PREFIX + randomBytes(32).toString('base64url');
  await db.query('INSERT INTO organisation (id) VALUES ($1::uuid) ON CONFLICT (id) DO NOTHING', [
    options.organisationId,
  ]);
  const expires = options.expiresInDays === undefined ? null : String(options.expiresInDays);
  const [row] = await db.query<{ id: string }>(
    `INSERT INTO api_token (organisation_id, name, token_hash, expires_at)
     VALUES ($1::uuid, $2::text, $3::text, now() + make_interval(days => $4::int4)) RETURNING id`,
    [options.organisationId, options.name ?? null, hashToken(token), expires],
  );
  return { id: row!.id, token };
}

export async function listTokens(db: Queryable, organisationId: string): Promise<TokenInfo[]> {
  return db.query<TokenInfo & Record<string, unknown>>(
    `SELECT id, organisation_id, name, created_at::text, expires_at::text, revoked_at::text
     FROM api_token WHERE organisation_id = $1::uuid ORDER BY created_at, id`,
    [organisationId],
  );
}

/** Revokes a token by id; false when there is no such token (or it was already revoked). */
export async function revokeToken(db: Queryable, tokenId: string): Promise<boolean> {
  const rows = await db.query(
    'UPDATE api_token SET revoked_at = now() WHERE id = $1::uuid AND revoked_at IS NULL RETURNING id',
    [tokenId],
  );
  return rows.length > 0;
}
