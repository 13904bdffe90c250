/**
 * The outbox: events of writes (registry/events.ts), one row per written row and subscription
 * wanting its type, inserted by the write's own statement (a data-modifying CTE over `written`), so
 * a committed write has its events and a rolled-back one none. A host takes them out
 * (`takeEvents`, in its own transaction) to deliver them.
 */
import type { Subscribers } from '../registry/events.ts';
import type { Resource, Tenancy } from '../registry/index.ts';
import { ownerType } from './scope.ts';
import { type CompiledStatement, ident, Params } from './sql.ts';

export const OUTBOX_TABLE = 'engage_outbox';

export const outboxTable = (tenancy: Tenancy | null) =>
  `CREATE TABLE IF NOT EXISTS "${OUTBOX_TABLE}" ("tenant" ${ownerType(tenancy)} NOT NULL,` +
  ' "id" uuid NOT NULL DEFAULT gen_random_uuid(), "subscriber" text NOT NULL, "type" text NOT NULL,' +
  ' "data" jsonb NOT NULL, "created_at" timestamptz NOT NULL DEFAULT now(), PRIMARY KEY ("tenant", "id"))';

export const OUTBOX_INDEX = `CREATE INDEX IF NOT EXISTS "${OUTBOX_TABLE}_created_idx" ON "${OUTBOX_TABLE}" ("created_at")`;

/**
 * `INSERT INTO outbox ... FROM <source> s JOIN subscribers`, the event of each source row `type`
 * (an SQL expression over `s`), for the subscriptions of `tenant` (an SQL expression over `s`, or
 * null without tenancy) that want it.
 */
function record(subscribers: Subscribers, source: string, tenant: string | null, type: string, data: string): string {
  const sub = (column: string) => `sub.${ident(column)}`;
  const on = [
    ...(tenant !== null && subscribers.tenant ? [`${sub(subscribers.tenant)} = ${tenant}`] : []),
    ...(subscribers.enabled ? [sub(subscribers.enabled)] : []),
    `e."type" = ANY(${sub(subscribers.types)})`,
  ];
  return (
    `INSERT INTO "${OUTBOX_TABLE}" ("tenant", "subscriber", "type", "data")` +
    ` SELECT ${tenant ?? "''"}, ${sub(subscribers.key)}::text, e."type", ${data}` +
    ` FROM ${source} CROSS JOIN LATERAL (SELECT ${type} AS "type") e` +
    ` JOIN ${ident(subscribers.table)} sub ON ${on.join(' AND ')}`
  );
}

/** What a write did to its rows: the event type of each. */
export type WriteKind = 'insert' | 'update' | 'delete';

/**
 * `, events AS (...)` recording the events of the rows of CTE `source` (the table's columns, and
 * `__inserted` after an insert), or '' when the resource has none for this write. `scoped` is what
 * the statement compares tenant columns with (compile/scope.ts), null without tenancy: the
 * subscriptions are read in the caller's tenant alone.
 */
export function eventsCte(
  resource: Resource,
  kind: WriteKind,
  params: Params,
  scoped: string | null,
  source = 'written',
): string {
  const { events } = resource;
  if (!events) return '';
  const { created, updated, deleted } = events;
  // Only the parameters the statement uses: PostgreSQL must infer each one's type.
  const type =
    kind === 'delete'
      ? deleted && params.add(deleted, 'text')
      : kind === 'update'
        ? updated && params.add(updated, 'text')
        : created &&
          updated &&
          `CASE WHEN w."__inserted" THEN ${params.add(created, 'text')} ELSE ${params.add(updated, 'text')} END`;
  if (!type) return '';
  // The row as its resource shows it: fields shown once (a secret) stay out.
  const hidden = ['__inserted', ...resource.shownOnce.map((f) => f.name)];
  const data = `to_jsonb(w) - ${params.add(`{${hidden.map((h) => `"${h}"`).join(',')}}`, 'text[]')}`;
  const name = source === 'written' ? 'events' : `${source}_events`;
  return `, ${name} AS (${record(events.subscribers, `${source} w`, resource.tenant ? scoped : null, type, data)} RETURNING 1)`;
}

/** An event the host records itself (`import.succeeded`) for the tenant's subscriptions that want it. */
export function compileEmit(
  subscribers: Subscribers,
  tenancy: Tenancy | null,
  tenant: string,
  type: string,
  data: unknown,
): CompiledStatement {
  const params = new Params();
  const owner = tenancy ? params.add(tenant, ownerType(tenancy)) : null;
  const text = record(
    subscribers,
    `(SELECT ${owner ?? "''"} AS "tenant") s`,
    owner === null ? null : 's."tenant"',
    params.add(type, 'text'),
    params.add(JSON.stringify(data), 'jsonb'),
  );
  return { text, params: params.values };
}

/** Takes up to `limit` events out of the outbox, oldest first, skipping those another transaction takes. */
export function compileTakeEvents(limit: number): CompiledStatement {
  const params = new Params();
  const text =
    `DELETE FROM "${OUTBOX_TABLE}" o USING (SELECT "tenant", "id" FROM "${OUTBOX_TABLE}" ORDER BY "created_at"` +
    ` LIMIT ${params.add(String(limit), 'int4')} FOR UPDATE SKIP LOCKED) t` +
    ' WHERE o."tenant" = t."tenant" AND o."id" = t."id"' +
    ' RETURNING o."tenant"::text AS "tenant", o."id"::text AS "id", o."subscriber", o."type", o."data"::text AS "data",' +
    ` to_json(o."created_at") #>> '{}' AS "created_at"`;
  return { text, params: params.values };
}
