/**
 * The database port: all the engine needs from a driver. Adapters exist for postgres.js
 * (`postgres.ts`) and PGlite (`pglite.ts`); statements and results are the same on both.
 */

/** A record by field name: a row a statement returns, or an item of a body. */
export type Row = Record<string, unknown>;

/**
 * Every statement is planned once per shape and the plan reused, whatever the values. The
 * organisation reaches each statement through the scope subquery, unknown at planning time, so a
 * per-execution plan learns little; left to choose, PostgreSQL re-planned list and details reads on
 * every execution on a 1M-contact database (0.1-0.9 ms each), which cost 25-30% of their throughput.
 */
export const PLAN_CACHE_MODE = 'force_generic_plan';

/**
 * Planner settings of every connection (db/settings.ts says how they reach it), beside
 * PLAN_CACHE_MODE. A generic plan prices an organisation's rows at the table's average per
 * organisation, so with a few uneven organisations a (parallel) sequential scan of every
 * organisation's rows looked cheaper than the index led by organisation_id, and a small
 * organisation's `ilike` read all of a large one's rows (300 ms against 2 ms). Priced out, every
 * tenant table is read through an index led by organisation_id (each has its key); a large
 * organisation's filters that no index serves then cost it up to 3x a sequential scan. Parallel workers are off: they
 * give one request the cores others wait for. JIT is off: a table no index serves is priced past jit_above_cost, and
 * compiling a filtered read of a one-row table took 20 to 45 ms where running it took 0.1 ms.
 */
export const PLANNER_SETTINGS = { enable_seqscan: 'off', max_parallel_workers_per_gather: '0', jit: 'off' } as const;

export type SqlParam = string | null;

export interface Queryable {
  /** Runs one parameterized statement, prepared where the driver can, and returns its rows. */
  query<T extends Row = Row>(text: string, params?: readonly SqlParam[]): Promise<T[]>;
}

export interface Database extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /**
   * Runs one statement as `Queryable.query` does. `lane` names who it is for (an organisation or a
   * token): when the pool is saturated, lanes are served in turn and none may hold all of it.
   * `locks`: a write, which may wait for a row lock and hold up what is pipelined behind it on its
   * connection: only statements of its own lane go there.
   */
  query<T extends Row = Row>(text: string, params?: readonly SqlParam[], lane?: string, locks?: boolean): Promise<T[]>;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>, lane?: string): Promise<T>;
  /** Runs several statements of trusted text (migrations, set-up); no parameters. */
  exec(text: string): Promise<void>;
  /** Resolves when the database answers, without waiting behind the statements queued for the pool. */
  ping(): Promise<void>;
  /**
   * Where a read may run (engine/db/replicas.ts): a replica that has replayed past `after` (a
   * `position()`) and is not too far behind, or this database. Without it reads run here.
   */
  reader?(after: string | undefined): Database;
  /** The primary's WAL position now: a read given it after a write sees that write. */
  position?(): Promise<string | undefined>;
  /** The read replicas as last seen, for /ready. */
  replicas?(): ReplicaState[];
  /** The pool's state now, for /ready and metrics; a fake database may leave it out. */
  stats?(): PoolStats;
  close(): Promise<void>;
}

export interface ReplicaState {
  /** The position it had replayed at its last poll; null when it did not answer or is not a replica. */
  readonly replayed: string | null;
  /** Whether it is close enough behind to serve reads now. */
  readonly serving: boolean;
}

export interface PoolStats {
  /** Connections in the pool. */
  readonly size: number;
  /** Connections running a statement or a transaction. */
  readonly inUse: number;
  /** Statements waiting for a connection. */
  readonly waiting: number;
}

export interface DatabaseOptions {
  /** Cancels statements that run longer (PostgreSQL statement_timeout), in ms; 0 for none. */
  readonly statementTimeoutMs?: number;
  /** Connections in the pool (postgres.js only). */
  readonly poolSize?: number;
}
