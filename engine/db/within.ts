/**
 * A database whose every statement runs in one transaction of another: a batch's operations. A
 * transaction begun on it is a savepoint, rolled back alone when it throws (an operation's dry run);
 * while it is open, statements sent from outside it wait, so that none lands inside it.
 */
import type { Database, Queryable } from './port.ts';

export function inTransaction(db: Database, tx: Queryable): Database {
  let depth = 0;
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
      const savepoint = `engage_savepoint_${++depth}`;
      try {
        await tx.query(`SAVEPOINT ${savepoint}`);
        let result: Awaited<ReturnType<typeof fn>>;
        try {
          result = await fn(tx);
        } catch (error) {
          // A connection that broke takes its transaction with it: the first failure is the one to tell.
          await tx.query(`ROLLBACK TO SAVEPOINT ${savepoint}`).catch(() => {});
          throw error;
        }
        await tx.query(`RELEASE SAVEPOINT ${savepoint}`);
        return result;
      } finally {
        depth--;
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
