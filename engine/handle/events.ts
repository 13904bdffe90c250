/**
 * The outbox of the events of writes, for the host that delivers them: events its writes record
 * themselves (compile/events.ts); `emit` records one of the host's own, `take` takes the oldest out.
 * Both run on the host's transaction, so an event leaves the outbox only with what the host did
 * with it.
 */
import { compileEmit, compileTakeEvents } from '../compile/events.ts';
import type { Queryable } from '../db/port.ts';
import type { Subscribers } from '../registry/events.ts';
import type { Tenancy } from '../registry/index.ts';

/** An event as the outbox holds it. */
export interface OutboxEvent {
  readonly tenant: string;
  readonly id: string;
  /** The key of the subscription that wants it (a webhook endpoint's id), as text. */
  readonly subscriber: string;
  readonly type: string;
  /** The row written (or the host's data), as JSON text. */
  readonly data: string;
  /** When it was recorded, ISO 8601. */
  readonly created_at: string;
}

export interface Outbox {
  /** Records an event of the host's (a declared host event) for a tenant's subscriptions that want it. */
  emit(q: Queryable, tenant: string, type: string, data: unknown): Promise<void>;
  /** Takes up to `limit` events out, oldest first, skipping those other transactions are taking. */
  take(q: Queryable, limit: number): Promise<OutboxEvent[]>;
}

export function outbox(subscribers: Subscribers, tenancy: Tenancy | null): Outbox {
  return {
    async emit(q, tenant, type, data) {
      const statement = compileEmit(subscribers, tenancy, tenant, type, data);
      await q.query(statement.text, statement.params);
    },
    async take(q, limit) {
      const statement = compileTakeEvents(limit);
      return (await q.query(statement.text, statement.params)) as unknown as OutboxEvent[];
    },
  };
}
