/**
 * Built-in bearer tokens (docs/contract.md section 4), for hosts without auth of their own: 256
 * random bits shown once, stored only as their SHA-256, optionally expiring, revocable. A token
 * belongs to one tenant; a request's `{ tokenHash }` scope is checked against the token table in the
 * request's own statement (compile/scope.ts), so a revoked token stops working at once.
 */
import { createHash, randomBytes } from 'node:crypto';

const PREFIX = 'engage_';
const TOKEN = /^engage_[A-Za-z0-9_-]{43}$/;

/** SHA-256 of a token, hex: what the token table keeps. */
export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Whether a string could be a token of ours; anything else is refused without a query. */
export const isWellFormedToken = (token: string): boolean => TOKEN.test(token);

/** A new token. */
export const newToken = (): string => PREFIX + randomBytes(32).toString('base64url');

/** The scope of a bearer token, or null when it cannot be one of ours. */
export const tokenScope = (token: string): { readonly tokenHash: string } | null =>
  isWellFormedToken(token) ? { tokenHash: hashToken(token) } : null;

/** A token as listings show it: never the token itself, which is not kept. */
export interface TokenInfo {
  readonly id: string;
  /** The tenant it acts for. */
  readonly tenant: string;
  readonly name: string | null;
  readonly created_at: string;
  readonly expires_at: string | null;
  readonly revoked_at: string | null;
  /** Whether it authorizes requests now: neither revoked nor expired. */
  readonly active: boolean;
}

export interface CreateTokenOptions {
  readonly name?: string | undefined;
  /** Whole days until it expires, at least 1; left out, it does not expire. */
  readonly expiresInDays?: number | undefined;
}

/** The engine's built-in tokens (`createEngine({ tokens: true })`). */
export interface Tokens {
  /** Creates a token for a tenant: its id, and the token, which is shown this once. */
  create(tenant: string, options?: CreateTokenOptions): Promise<{ id: string; token: string }>;
  /** The tokens of a tenant, or of every tenant, oldest first. */
  list(tenant?: string): Promise<TokenInfo[]>;
  /** Revokes a token by its id; false when there is no such token, or it was revoked already. */
  revoke(id: string): Promise<boolean>;
}
