/** Locks held from outside the server, so that its statements wait exactly as long as a test wants. */
import type { Queryable } from '@engage/engine';
import type postgres from 'postgres';

/** Takes locks with `take` in a transaction on `sql` and holds them until the returned function is called. */
export async function holdLocks(
  sql: postgres.Sql,
  take: (tx: postgres.TransactionSql) => Promise<unknown>,
): Promise<() => Promise<void>> {
  let unlock!: () => void;
  const held = new Promise<void>((resolve) => {
    unlock = resolve;
  });
  let locked!: () => void;
  const ready = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const tx = sql.begin(async (tx) => {
    await take(tx);
    locked();
    await held;
  });
  await ready;
  return async () => {
    unlock();
    await tx;
  };
}

/** The server's statements (application_name engage) in `db`'s database waiting on a lock now. */
export async function waitingOnLocks(db: Queryable): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND application_name = 'engage'`,
  );
  return row!.n;
}
