/**
 * Admission to the pool's connections. Each connection runs one statement (or transaction) at a
 * time, so a cheap statement never waits behind a slow one on the same connection while another
 * is free. When every connection is busy, statements wait in a queue per lane (the caller's
 * organisation or token), served in turn, and one lane may hold at most `laneLimit` connections:
 * an organisation running slow queries leaves the rest of the pool to the others. A wait is
 * bounded by `queueTimeoutMs` and the queue by `queueMax`; past either the statement is refused
 * at once with PoolBusy, which callers see as 503 (docs/contract.md section 5).
 */

export interface AdmissionOptions {
  /** Connections: statements that may run at once. */
  readonly slots: number;
  /** The most connections one lane may hold at once. */
  readonly laneLimit: number;
  /** The longest a statement may wait for a connection, in ms. */
  readonly queueTimeoutMs: number;
  /** The most statements that may wait at once. */
  readonly queueMax: number;
}

/** A statement refused because the pool is saturated; the same request may succeed shortly. */
export class PoolBusy extends Error {
  override readonly name = 'PoolBusy';
}

interface Waiter {
  readonly lane: Lane;
  readonly resolve: (slot: number) => void;
  readonly reject: (error: PoolBusy) => void;
  timer: NodeJS.Timeout | undefined;
}

interface Lane {
  readonly key: string;
  running: number;
  readonly waiting: Waiter[];
}

export class Admission {
  readonly #options: AdmissionOptions;
  readonly #free: number[];
  readonly #lanes = new Map<string, Lane>();
  /** Lanes with waiters, in the order they are served next (a lane goes to the back once served). */
  readonly #queued = new Set<Lane>();
  #waiting = 0;

  constructor(options: AdmissionOptions) {
    this.#options = { ...options, laneLimit: Math.max(1, Math.min(options.laneLimit, options.slots)) };
    this.#free = Array.from({ length: options.slots }, (_, i) => options.slots - 1 - i);
  }

  /** Statements waiting for a connection now. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Connections running a statement now. */
  get running(): number {
    return this.#options.slots - this.#free.length;
  }

  /** Runs `fn` on a connection (its index) once `lane` may have one, and frees it afterwards. */
  async run<T>(laneKey: string, fn: (slot: number) => Promise<T>): Promise<T> {
    const lane = this.#lane(laneKey);
    const slot = await this.#acquire(lane);
    try {
      return await fn(slot);
    } finally {
      this.#release(lane, slot);
    }
  }

  #lane(key: string): Lane {
    let lane = this.#lanes.get(key);
    if (!lane) {
      lane = { key, running: 0, waiting: [] };
      this.#lanes.set(key, lane);
    }
    return lane;
  }

  #acquire(lane: Lane): number | Promise<number> {
    if (this.#free.length > 0 && lane.running < this.#options.laneLimit && lane.waiting.length === 0) {
      lane.running++;
      return this.#free.pop()!;
    }
    const { queueMax, queueTimeoutMs } = this.#options;
    if (this.#waiting >= queueMax) {
      this.#forget(lane);
      return Promise.reject(
        new PoolBusy(`the database is busy: ${queueMax} requests are already waiting for a connection; retry shortly`),
      );
    }
    return new Promise<number>((resolve, reject) => {
      const waiter: Waiter = { lane, resolve, reject, timer: undefined };
      waiter.timer = setTimeout(() => {
        lane.waiting.splice(lane.waiting.indexOf(waiter), 1);
        this.#waiting--;
        if (lane.waiting.length === 0) this.#queued.delete(lane);
        this.#forget(lane);
        reject(
          new PoolBusy(`the database is busy: no connection became free within ${queueTimeoutMs} ms; retry shortly`),
        );
      }, queueTimeoutMs);
      lane.waiting.push(waiter);
      this.#waiting++;
      this.#queued.add(lane);
    });
  }

  #release(lane: Lane, slot: number): void {
    lane.running--;
    this.#free.push(slot);
    this.#dispatch();
    this.#forget(lane);
  }

  /** Hands free connections to waiting lanes in turn, skipping lanes at their limit. */
  #dispatch(): void {
    while (this.#free.length > 0 && this.#queued.size > 0) {
      let next: Lane | undefined;
      for (const lane of this.#queued) {
        if (lane.running < this.#options.laneLimit) {
          next = lane;
          break;
        }
      }
      if (!next) return;
      const waiter = next.waiting.shift()!;
      this.#waiting--;
      // Served: to the back of the turn, or out of it when nothing more waits.
      this.#queued.delete(next);
      if (next.waiting.length > 0) this.#queued.add(next);
      clearTimeout(waiter.timer);
      next.running++;
      waiter.resolve(this.#free.pop()!);
    }
  }

  /** Drops a lane that holds and awaits nothing, so lanes do not pile up. */
  #forget(lane: Lane): void {
    if (lane.running === 0 && lane.waiting.length === 0) this.#lanes.delete(lane.key);
  }
}
