/**
 * Idempotent writes: a write sent with an `Idempotency-Key` runs once per key and tenant. Its claim
 * on the key, the write and its saved response share one transaction, so either all of them
 * committed (a retry gets the saved response, `Idempotent-Replayed: true`, and writes nothing) or
 * none did (a retry runs as if first). Keys are kept `hours` after their first use; expired ones
 * are swept in small batches off the requests' path.
 */
import { type ClaimRow, compileClaim, compileSave, compileSweep } from '../compile/idempotency.ts';
import { laneOf, type Scope } from '../compile/scope.ts';
import type { Queryable } from '../db/port.ts';
import { ApiError } from '../errors.ts';
import { REPLAYED_HEADER } from '../parse/idempotency.ts';
import type { EngineResponse } from '../respond.ts';
import type { Context } from './context.ts';

export interface IdempotencyOptions {
  /** How long a key and its response are kept after the first request (default 24). */
  readonly hours?: number;
}

/** A request's key and what makes a retry the same request (parse/idempotency.ts). */
export interface IdempotentRequest {
  readonly key: string;
  readonly fingerprint: string;
}

/** How often a process sweeps expired keys, and how many at most each time. */
const SWEEP_MS = 60_000;
const SWEEP_BATCH = 1000;

export type RunOnce = (
  scope: Scope | undefined,
  request: IdempotentRequest,
  write: (tx: Queryable) => Promise<EngineResponse>,
) => Promise<{ readonly authorized: number; readonly response: EngineResponse | null }>;

/** Runs writes once per key; `authorized` is 0 (and no response) when the scope's token is not valid. */
export function idempotency(ctx: Context, options: IdempotencyOptions): RunOnce {
  const hours = options.hours ?? 24;
  if (!Number.isInteger(hours) || hours < 1)
    throw new Error('engine: idempotency keys are kept a whole number of hours, at least 1');
  let swept = Date.now();
  return (scope, request, write) => {
    if (Date.now() - swept > SWEEP_MS) {
      swept = Date.now();
      const sweep = compileSweep(SWEEP_BATCH);
      // Best effort: a failed sweep is retried a minute later.
      ctx.execute(sweep.text, sweep.params, undefined, 'idempotency').catch(() => {});
    }
    return ctx.db.transaction(async (tx) => {
      const claim = compileClaim(scope, ctx.scoping, request.key, request.fingerprint, hours);
      const [row] = await ctx.observe('idempotency', () =>
        tx.query<ClaimRow & Record<string, unknown>>(claim.text, claim.params),
      );
      if (row!.authorized !== 1) return { authorized: 0, response: null };
      const tenant = row!.tenant!;
      ctx.learn(scope, tenant);
      if (row!.locked && row!.claimed === 1) {
        const response = await write(tx);
        const save = compileSave(ctx.scoping.tenancy, tenant, request.key, response);
        await ctx.observe('idempotency', () => tx.query(save.text, save.params));
        return { authorized: 1, response };
      }
      if (row!.locked && row!.status !== null) {
        if (row!.fingerprint !== request.fingerprint) {
          throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was first sent with another request', {
            hint: 'Send a new key with each new write; a retry repeats the method, path, query and body exactly.',
          });
        }
        const headers = JSON.parse(row!.headers ?? '{}') as Record<string, string>;
        return {
          authorized: 1,
          response: { status: row!.status, headers: { ...headers, [REPLAYED_HEADER]: 'true' }, body: row!.body },
        };
      }
      // Locked elsewhere, or committed after this statement began: the first request is (just) running.
      throw new ApiError(
        'IDEMPOTENCY_KEY_IN_PROGRESS',
        'the first request with this Idempotency-Key is still running',
        {
          hint: 'Retry shortly with the same key: you will get its response.',
          headers: { 'Retry-After': '1' },
        },
      );
    }, laneOf(scope));
  };
}
