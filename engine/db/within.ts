/**
 * A database whose every statement runs in one transaction of another: a batch's operations. A
 * transaction begun on it is a savepoint, rolled back alone when it throws (an operation's dry run).
 */
import type { Database, Queryable } from './port.ts';

export function inTransaction(db: Database, tx: Queryable): Database {
  let depth = 0;
  return {
    kind: db.kind,
    query: (text, params) => tx.query(text, params),
    async transaction(fn) {
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
      }
    },
    exec: async (text) => {
      await tx.query(text);
    },
    ping: () => db.ping(),
    close: async () => {},
  };
}
