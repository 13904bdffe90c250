/**
 * Admission to the pool's connections, per lane (the caller's token or organisation).
 *
 * A statement goes to an idle connection when there is one, otherwise it is pipelined behind the
 * statements of the least loaded connection whose oldest statement is young: a cheap statement
 * never queues behind one known to be slow (running for over `youngMs`). A lane holds statements on
 * at most `laneLimit` connections, so an organisation running slow queries leaves the rest of the
 * pool to the others. A transaction needs an idle connection and keeps it to itself; while one
 * waits, one connection takes nothing new, so that it turns idle however steady the load. A write
 * may wait for a row lock, holding whatever is pipelined behind it: behind one go only statements of
 * its own lane, and only while no other lane waits, so a lock wait delays no one else's statement
 * and a lane writing without pause still hands connections over in turn.
 *
 * When no connection will do, statements wait in their lane's queue; lanes are served in turn as
 * connections free up. A wait is bounded by `queueTimeoutMs` and the queue by `queueMax`; past
 * either the statement is refused with PoolBusy, which callers see as 503 (docs/contract.md
 * section 5).
 */

/**
 * What a statement needs of its connection: `shared`, a read, pipelined with anything; `locking`, a
 * statement that may wait for a row lock (a write), behind which only its own lane's are pipelined;
 * `exclusive`, a transaction, alone on its connection from its first statement to its last.
 */
export type Access = 'shared' | 'locking' | 'exclusive';

export interface AdmissionOptions {
  /** Connections. */
  readonly connections: number;
  /** The most connections one lane may have statements on at once. */
  readonly laneLimit: number;
  /** The most statements pipelined on one connection. */
  readonly depth: number;
  /** A statement in flight for longer is taken to be slow: nothing is pipelined behind it. */
  readonly youngMs: number;
  /** The longest a statement may wait for a connection, in ms. */
  readonly queueTimeoutMs: number;
  /** The most statements that may wait at once. */
  readonly queueMax: number;
}

/** A statement refused because the pool is saturated; the same request may succeed shortly. */
export class PoolBusy extends Error {
  override readonly name = 'PoolBusy';
}

interface Connection {
  readonly index: number;
  /** Start times of the statements in flight, oldest first (a connection answers in order). */
  readonly started: number[];
  /** Held by a transaction. */
  exclusive: boolean;
  /** Locking statements in flight, and the lane they are all of. */
  locking: number;
  lockingLane: string;
}

/** A statement's place on a connection: its start time is its entry in `started`. */
interface Held {
  readonly connection: Connection;
  readonly started: number;
  readonly access: Access;
}

interface Waiter {
  readonly access: Access;
  readonly resolve: (held: Held) => void;
  readonly reject: (error: PoolBusy) => void;
  timer: NodeJS.Timeout | undefined;
}

interface Lane {
  readonly key: string;
  /** Statements in flight by connection index. */
  readonly held: Map<number, number>;
  readonly waiting: Waiter[];
}

export class Admission {
  readonly #options: AdmissionOptions;
  readonly #connections: Connection[];
  readonly #lanes = new Map<string, Lane>();
  /** Lanes with waiters, in the order they are served next (a lane goes to the back once served). */
  readonly #queued = new Set<Lane>();
  #waiting = 0;
  /** Exclusive statements waiting, and the connection that takes nothing new meanwhile. */
  #exclusiveWaiting = 0;
  #draining: Connection | undefined;

  constructor(options: AdmissionOptions) {
    this.#options = { ...options, laneLimit: Math.max(1, Math.min(options.laneLimit, options.connections)) };
    this.#connections = Array.from({ length: options.connections }, (_, index) => ({
      index,
      started: [],
      exclusive: false,
      locking: 0,
      lockingLane: '',
    }));
  }

  /** Runs `fn` on a connection (its index) once `lane` may have one that gives `access`. */
  async run<T>(laneKey: string, access: Access, fn: (connection: number) => Promise<T>): Promise<T> {
    const lane = this.#lane(laneKey);
    const free = lane.waiting.length === 0 ? this.#pick(lane, access) : undefined;
    const held = free ? this.#take(lane, free, access) : await this.#wait(lane, access);
    try {
      return await fn(held.connection.index);
    } finally {
      this.#release(lane, held);
    }
  }

  /** Connections in use and statements waiting, now. */
  stats(): { size: number; inUse: number; waiting: number } {
    let inUse = 0;
    for (const c of this.#connections) if (c.started.length > 0) inUse++;
    return { size: this.#connections.length, inUse, waiting: this.#waiting };
  }

  #lane(key: string): Lane {
    let lane = this.#lanes.get(key);
    if (!lane) {
      lane = { key, held: new Map(), waiting: [] };
      this.#lanes.set(key, lane);
    }
    return lane;
  }

  /** An idle connection, or the least loaded young one to pipeline on; none if the lane must wait. */
  #pick(lane: Lane, access: Access): Connection | undefined {
    const { laneLimit, depth, youngMs } = this.#options;
    const atLimit = lane.held.size >= laneLimit;
    const othersWait = this.#queued.size > (this.#queued.has(lane) ? 1 : 0);
    const now = performance.now();
    let best: Connection | undefined;
    for (const c of this.#connections) {
      const draining = c === this.#draining && access !== 'exclusive';
      if (c.exclusive || (atLimit && !lane.held.has(c.index)) || draining) continue;
      if (c.started.length === 0) return c;
      if (access === 'exclusive' || c.started.length >= depth || now - c.started[0]! > youngMs) continue;
      if (c.locking > 0 && (c.lockingLane !== lane.key || othersWait)) continue;
      if (!best || c.started.length < best.started.length) best = c;
    }
    return best;
  }

  #take(lane: Lane, connection: Connection, access: Access): Held {
    const started = performance.now();
    connection.started.push(started);
    connection.exclusive = access === 'exclusive';
    if (access === 'locking' && connection.locking++ === 0) connection.lockingLane = lane.key;
    lane.held.set(connection.index, (lane.held.get(connection.index) ?? 0) + 1);
    return { connection, started, access };
  }

  #wait(lane: Lane, access: Access): Promise<Held> {
    const exclusive = access === 'exclusive';
    const { queueMax, queueTimeoutMs } = this.#options;
    if (this.#waiting >= queueMax) {
      this.#forget(lane);
      return Promise.reject(
        new PoolBusy(`the database is busy: ${queueMax} requests are already waiting for a connection; retry shortly`),
      );
    }
    return new Promise<Held>((resolve, reject) => {
      const waiter: Waiter = { access, resolve, reject, timer: undefined };
      waiter.timer = setTimeout(() => {
        lane.waiting.splice(lane.waiting.indexOf(waiter), 1);
        this.#waiting--;
        if (exclusive) this.#exclusiveDone();
        if (lane.waiting.length === 0) this.#queued.delete(lane);
        this.#forget(lane);
        reject(
          new PoolBusy(`the database is busy: no connection became free within ${queueTimeoutMs} ms; retry shortly`),
        );
      }, queueTimeoutMs);
      lane.waiting.push(waiter);
      this.#waiting++;
      this.#queued.add(lane);
      if (exclusive && this.#exclusiveWaiting++ === 0) this.#drain();
    });
  }

  /** Picks the connection that turns idle soonest (the fewest statements) to take nothing new. */
  #drain(): void {
    let best: Connection | undefined;
    for (const c of this.#connections) {
      if (!c.exclusive && (!best || c.started.length < best.started.length)) best = c;
    }
    this.#draining = best;
  }

  /** An exclusive waiter was served or gave up: the next one, if any, gets a connection drained. */
  #exclusiveDone(): void {
    this.#draining = undefined;
    if (--this.#exclusiveWaiting > 0) this.#drain();
  }

  #release(lane: Lane, { connection, started, access }: Held): void {
    connection.started.splice(connection.started.indexOf(started), 1);
    if (connection.started.length === 0) connection.exclusive = false;
    if (access === 'locking') connection.locking--;
    const count = lane.held.get(connection.index)! - 1;
    if (count === 0) lane.held.delete(connection.index);
    else lane.held.set(connection.index, count);
    this.#dispatch();
    this.#forget(lane);
  }

  /** Hands connections to waiting lanes in turn, as long as one of them can be served. */
  #dispatch(): void {
    let served = true;
    while (served && this.#queued.size > 0) {
      served = false;
      for (const lane of this.#queued) {
        const waiter = lane.waiting[0]!;
        const connection = this.#pick(lane, waiter.access);
        if (!connection) continue;
        lane.waiting.shift();
        this.#waiting--;
        // Served: to the back of the turn, or out of it when nothing more waits.
        this.#queued.delete(lane);
        if (lane.waiting.length > 0) this.#queued.add(lane);
        clearTimeout(waiter.timer);
        waiter.resolve(this.#take(lane, connection, waiter.access));
        if (waiter.access === 'exclusive') this.#exclusiveDone();
        served = true;
        break;
      }
    }
  }

  /** Drops a lane that holds and awaits nothing, so lanes do not pile up. */
  #forget(lane: Lane): void {
    if (lane.held.size === 0 && lane.waiting.length === 0) this.#lanes.delete(lane.key);
  }
}
