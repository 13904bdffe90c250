/**
 * A database whose every statement runs in one transaction of another: a batch's operations. A
 * transaction begun on it is a savepoint, rolled back alone when it throws (an operation's dry run);
 * while it is open, statements sent from outside it wait, so that none lands inside it.
 */
import type { Database, Queryable } from './port.ts';

/** Savepoints take turns (see `gate`), so one name serves them all. */
const SAVEPOINT = 'engage_savepoint';

export function inTransaction(db: Database, tx: Queryable): Database {
  /**
   * Settles once every savepoint begun so far has closed. Taken when a statement is sent (not when
   * it runs), so statements keep the order in which they were sent around each savepoint.
   */
  let gate: Promise<void> = Promise.resolve();
  return {
    kind: db.kind,
    async query(text, params) {
      await gate;
      return tx.query(text, params);
    },
    async transaction(fn) {
      const before = gate;
      let open!: () => void;
      const closed = new Promise<void>((resolve) => {
        open = resolve;
      });
      gate = before.then(() => closed);
      await before;
      try {
        await tx.query(`SAVEPOINT ${SAVEPOINT}`);
        let result: Awaited<ReturnType<typeof fn>>;
        try {
          result = await fn(tx);
        } catch (error) {
          // A connection that broke takes its transaction with it: the first failure is the one to tell.
          await tx.query(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`).catch(() => {});
          throw error;
        }
        await tx.query(`RELEASE SAVEPOINT ${SAVEPOINT}`);
        return result;
      } finally {
        open();
      }
    },
    exec: async (text) => {
      await tx.query(text);
    },
    ping: () => db.ping(),
    close: async () => {},
  };
}
