/**
 * Idempotent writes: a write sent with an `Idempotency-Key` runs once per key and tenant. The key,
 * the write and what it gave commit together (compile/idempotency.ts), so either all of them did
 * (a retry gets the same response, `Idempotent-Replayed: true`, and writes nothing) or none did (a
 * retry runs as if first). The engine's own writes do it in their one statement; a host's write
 * (`Engine.once`) in a transaction. Keys are kept `hours` after their first use; expired ones are
 * swept in small batches off the requests' path.
 */
import {
  type ClaimRow,
  compileClaim,
  compileSave,
  compileSweep,
  type IdempotencyKey,
  type KeyState,
} from '../compile/idempotency.ts';
import { laneOf, type Scope } from '../compile/scope.ts';
import type { Queryable } from '../db/port.ts';
import { ApiError, idempotencyInProgress } from '../errors.ts';
import { fingerprint, REPLAYED_HEADER } from '../parse/idempotency.ts';
import type { EngineResponse } from '../respond.ts';
import type { Context } from './context.ts';

export interface IdempotencyOptions {
  /** How long a key and its response are kept after the first request (default 24). */
  readonly hours?: number;
}

/** How often a process sweeps expired keys, and how many at most each time. */
const SWEEP_MS = 60_000;
const SWEEP_BATCH = 1000;

export interface Idempotency {
  /** A request's key, as statements take it: its fingerprint made of method, target and body. */
  key(key: string, method: string, target: string, body: string | null): IdempotencyKey;
  /**
   * What an idempotent write statement found (KeyState): null when this request wrote, else the
   * stored result to answer with; throws when another request holds the key or sent it first.
   */
  stored(key: IdempotencyKey, state: KeyState): string | null;
  /**
   * Runs a host's write once per key; `authorized` is 0 (and no response) when the scope's token is
   * not valid.
   */
  once(
    scope: Scope | undefined,
    key: IdempotencyKey,
    write: (tx: Queryable) => Promise<EngineResponse>,
  ): Promise<{ readonly authorized: number; readonly response: EngineResponse | null }>;
}

const reused = () =>
  new ApiError('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was first sent with another request', {
    hint: 'Send a new key with each new write; a retry repeats the method, path, query and body exactly.',
  });

/** A stored response, sent again. */
export const replayed = (response: EngineResponse): EngineResponse => ({
  ...response,
  headers: { ...response.headers, [REPLAYED_HEADER]: 'true' },
});

export function idempotency(ctx: Context, options: IdempotencyOptions): Idempotency {
  const hours = options.hours ?? 24;
  if (!Number.isInteger(hours) || hours < 1)
    throw new Error('engine: idempotency keys are kept a whole number of hours, at least 1');
  let swept = Date.now();
  /** Sweeps expired keys at most once a minute, best effort: a failed sweep is retried a minute later. */
  const sweep = () => {
    if (Date.now() - swept < SWEEP_MS) return;
    swept = Date.now();
    const statement = compileSweep(SWEEP_BATCH);
    ctx.execute(statement.text, statement.params, undefined, 'idempotency').catch(() => {});
  };
  const stored = (key: IdempotencyKey, state: KeyState): string | null => {
    if (state.__fingerprint !== null) {
      if (state.__fingerprint !== key.fingerprint) throw reused();
      return state.__stored;
    }
    // Locked elsewhere, or committed after this statement began: the first request is (just) running.
    if (!state.__locked) throw idempotencyInProgress();
    return null;
  };
  return {
    key(key, method, target, body) {
      sweep();
      return { key, fingerprint: fingerprint(method, target, body), hours };
    },
    stored,
    once(scope, key, write) {
      return ctx.db.transaction(async (tx) => {
        const claim = compileClaim(scope, ctx.scoping, key);
        const [row] = await ctx.observe('idempotency', () =>
          tx.query<ClaimRow & Record<string, unknown>>(claim.text, claim.params),
        );
        if (row!.authorized !== 1) return { authorized: 0, response: null };
        ctx.learn(scope, row!.tenant);
        const earlier = stored(key, row!);
        if (earlier !== null) return { authorized: 1, response: replayed(JSON.parse(earlier) as EngineResponse) };
        // Taken by this request, or committed after the claim began.
        if (row!.claimed !== 1) throw idempotencyInProgress();
        const response = await write(tx);
        const save = compileSave(ctx.scoping.tenancy, row!.tenant!, key.key, response);
        await ctx.observe('idempotency', () => tx.query(save.text, save.params));
        return { authorized: 1, response };
      }, laneOf(scope));
    },
  };
}
