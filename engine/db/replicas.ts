/**
 * Reads on streaming replicas (READ_DATABASE_URL). The primary takes every write and every
 * transaction but one of reads alone (a batch of reads); a read may go to a replica that is close
 * enough behind, or, when it must see a write (it carries that write's position), to one that has
 * replayed past it. No replica fits: the primary.
 *
 * Positions are WAL positions (LSNs, `16/B374D848`). A poll every POLL_MS reads the primary's
 * position and each replica's replayed one; a replica is used while it has replayed all the primary
 * had written `maxLagMs` ago. One that fails to answer is left out until a poll reaches it again,
 * and a read it fails to serve runs on the primary instead.
 */

import { formatPosition, parsePosition } from '../wal-position.ts';
import { mapDatabaseError } from './errors.ts';
import type { Database, Queryable, Row, SqlParam } from './port.ts';

/** How often positions are read: a write's position is seen on a replica at most this much later. */
export const POLL_MS = 100;
/** A server that has not told its position within this is taken to be down until it does. */
const POLL_TIMEOUT_MS = 1000;

export interface ReplicaOptions {
  /** A replica that has not replayed what the primary had written this long ago is skipped. */
  readonly maxLagMs: number;
}

interface Replica {
  readonly db: Database;
  /** The position it has replayed at its last poll; undefined while it is down or not a replica. */
  replayed: bigint | undefined;
  /** Reads on it, falling back to the primary: made once, handed to every read it serves. */
  readonly reader: Database;
}

/** The primary's position at a moment. */
interface Sample {
  readonly at: number;
  readonly position: bigint;
}

const PRIMARY_POSITION = 'SELECT pg_current_wal_lsn()::text AS position';
/** NULL on a server that is not in recovery: a promoted replica has its own history. */
const REPLAYED_POSITION = 'SELECT pg_last_wal_replay_lsn()::text AS position';

const positionOf = (rows: Row[]) => parsePosition(String(rows[0]?.position ?? ''));

/** `primary` with `replicas` for its reads; closing it closes them all. */
export function withReplicas(primary: Database, databases: readonly Database[], options: ReplicaOptions): Database {
  const readerOf = (replica: Omit<Replica, 'reader'>): Database => ({
    ...primary,
    async query<T extends Row = Row>(text: string, params?: readonly SqlParam[], lane?: string) {
      try {
        return await replica.db.query<T>(text, params, lane);
      } catch (error) {
        // The caller's own mistakes fail the same on the primary; the replica's troubles do not.
        if (mapDatabaseError(error).code !== 'DATABASE_UNAVAILABLE') throw error;
        replica.replayed = undefined;
        return primary.query<T>(text, params, lane);
      }
    },
    // A transaction of reads (a batch of them): run again on the primary when the replica fails it.
    async transaction<T>(fn: (tx: Queryable) => Promise<T>, lane?: string) {
      try {
        return await replica.db.transaction(fn, lane);
      } catch (error) {
        if (mapDatabaseError(error).code !== 'DATABASE_UNAVAILABLE') throw error;
        replica.replayed = undefined;
        return primary.transaction(fn, lane);
      }
    },
  });

  const replicas: Replica[] = databases.map((db) => {
    const replica = { db, replayed: undefined as bigint | undefined };
    return Object.assign(replica, { reader: readerOf(replica) });
  });
  /** The primary's positions over the last maxLagMs, and the one just before them. */
  const samples: Sample[] = [];
  /**
   * False from a failed poll of the primary until the samples span maxLagMs again: meanwhile no
   * replica's lag can be known, so none serves.
   */
  let bounded = true;
  let turn = 0;

  /** `query` on `db`'s first row as a position; undefined when it fails or takes longer than a poll may. */
  const positionOn = (db: Database, query: string) =>
    new Promise<bigint | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), POLL_TIMEOUT_MS);
      db.query(query).then(
        (rows) => resolve(positionOf(rows)),
        () => resolve(undefined),
      );
      timer.unref();
    });

  async function poll() {
    const [position, ...replayed] = await Promise.all([
      positionOn(primary, PRIMARY_POSITION),
      ...replicas.map((r) => positionOn(r.db, REPLAYED_POSITION)),
    ]);
    replayed.forEach((at, i) => {
      replicas[i]!.replayed = at;
    });
    if (position === undefined) {
      samples.length = 0;
      bounded = false;
      return;
    }
    const now = Date.now();
    samples.push({ at: now, position });
    while (samples.length > 1 && samples[1]!.at <= now - options.maxLagMs) samples.shift();
  }

  // One poll at a time: a tick that finds the last one still waiting is skipped.
  let polling = false;
  const tick = () => {
    if (polling) return;
    polling = true;
    void poll().finally(() => {
      polling = false;
    });
  };
  tick();
  const timer = setInterval(tick, POLL_MS);
  timer.unref();

  /** What a replica must have replayed to serve: all the primary had written maxLagMs ago; undefined: none serves. */
  const needed = (): bigint | undefined => {
    const oldest = samples[0];
    if (oldest && oldest.at <= Date.now() - options.maxLagMs) {
      bounded = true;
      return oldest.position;
    }
    return bounded ? 0n : undefined;
  };

  /** A replica close enough behind that has replayed `after`, taking turns among those that fit. */
  function pick(after: bigint | undefined): Replica | undefined {
    const need = needed();
    if (need === undefined) return undefined;
    const least = after !== undefined && after > need ? after : need;
    const fit = replicas.filter((r) => r.replayed !== undefined && r.replayed >= least);
    if (fit.length === 0) return undefined;
    turn = (turn + 1) % fit.length;
    return fit[turn];
  }

  return {
    ...primary,
    reader(after) {
      const replica = pick(after === undefined ? undefined : parsePosition(after));
      return replica?.reader ?? primary;
    },
    // The write has committed whatever this says: without a position its reads go to the primary.
    position: () =>
      primary.query(PRIMARY_POSITION).then(
        (rows) => (rows[0] ? String(rows[0].position) : undefined),
        () => undefined,
      ),
    replicas: () => {
      const need = needed();
      return replicas.map((r) => ({
        replayed: r.replayed === undefined ? null : formatPosition(r.replayed),
        serving: need !== undefined && r.replayed !== undefined && r.replayed >= need,
      }));
    },
    async close() {
      clearInterval(timer);
      await Promise.all([primary.close(), ...replicas.map((r) => r.db.close())]);
    },
  };
}
