/**
 * The outbox: events of writes (registry/events.ts), one row per written row and subscription
 * wanting its type, inserted by the write's own statement (a data-modifying CTE over `written`), so
 * a committed write has its events and a rolled-back one none. A host takes them out
 * (`takeEvents`, in its own transaction) to deliver them.
 */
import type { ResourceEvents, Subscribers } from '../registry/events.ts';
import type { Resource, Tenancy } from '../registry/index.ts';
import { ownerType } from './scope.ts';
import { type CompiledStatement, ident, Params } from './sql.ts';

export const OUTBOX_TABLE = 'engage_outbox';

export const outboxTable = (tenancy: Tenancy | null) =>
  `CREATE TABLE IF NOT EXISTS "${OUTBOX_TABLE}" ("tenant" ${ownerType(tenancy)} NOT NULL,` +
  ' "id" uuid NOT NULL DEFAULT gen_random_uuid(), "subscriber" text NOT NULL, "type" text NOT NULL,' +
  ' "data" jsonb NOT NULL, "created_at" timestamptz NOT NULL DEFAULT now(), PRIMARY KEY ("tenant", "id"))';

export const OUTBOX_INDEX = `CREATE INDEX IF NOT EXISTS "${OUTBOX_TABLE}_created_idx" ON "${OUTBOX_TABLE}" ("created_at")`;

/** Which of `subscribers`' rows are the tenant's (`tenant`, an SQL expression, null without tenancy) and enabled. */
function subscribed(subscribers: Subscribers, tenant: string | null): string[] {
  const sub = (column: string) => `sub.${ident(column)}`;
  return [
    ...(tenant !== null && subscribers.tenant ? [`${sub(subscribers.tenant)} = ${tenant}`] : []),
    ...(subscribers.enabled ? [sub(subscribers.enabled)] : []),
  ];
}

/**
 * `INSERT INTO outbox ... FROM <source> s JOIN subscribers`, the event of each source row `type`
 * (an SQL expression over `s`), for the subscriptions of `tenant` (an SQL expression over `s`, or
 * null without tenancy) that want it.
 */
function record(subscribers: Subscribers, source: string, tenant: string | null, type: string, data: string): string {
  const on = [...subscribed(subscribers, tenant), `e."type" = ANY(sub.${ident(subscribers.types)})`];
  return (
    `INSERT INTO "${OUTBOX_TABLE}" ("tenant", "subscriber", "type", "data")` +
    ` SELECT ${tenant ?? "''"}, sub.${ident(subscribers.key)}::text, e."type", ${data}` +
    ` FROM ${source} CROSS JOIN LATERAL (SELECT ${type} AS "type") e` +
    ` JOIN ${ident(subscribers.table)} sub ON ${on.join(' AND ')}`
  );
}

/** What a write did to its rows: the event type of each. */
export type WriteKind = 'insert' | 'update' | 'delete';

/**
 * The event type of each row of `w` after a write of `kind` (an SQL expression), and the types it
 * can be; null when the resource records none for this write. Only the parameters the statement
 * uses: PostgreSQL must infer each one's type.
 */
function eventTypes(events: ResourceEvents, kind: WriteKind, params: Params) {
  const { created, updated, deleted } = events;
  const one = (type: string | null) => {
    const t = type && params.add(type, 'text');
    return t ? { type: t, types: [t] } : null;
  };
  if (kind !== 'insert') return one(kind === 'update' ? updated : deleted);
  if (!created || !updated) return null;
  const [c, u] = [params.add(created, 'text'), params.add(updated, 'text')];
  return { type: `CASE WHEN w."__inserted" THEN ${c} ELSE ${u} END`, types: [c, u] };
}

/** The row as its resource shows it: `to_jsonb` of it without `extra` and the fields shown once (a secret). */
function shown(resource: Resource, row: string, params: Params, extra: readonly string[] = []): string {
  const hidden = [...extra, ...resource.shownOnce.map((f) => f.name)];
  return `to_jsonb(${row}) - ${params.add(`{${hidden.map((h) => `"${h}"`).join(',')}}`, 'text[]')}`;
}

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
  const types = events && eventTypes(events, kind, params);
  if (!types) return '';
  const data = shown(resource, 'w', params, ['__inserted']);
  const name = source === 'written' ? 'events' : `${source}_events`;
  return `, ${name} AS (${record(events.subscribers, `${source} w`, resource.tenant ? scoped : null, types.type, data)} RETURNING 1)`;
}

/**
 * The events of a write whose statement returns keys rather than rows (an import), in two parts:
 * `returning`, a column `__event` of RETURNING (table alias `t`) holding each row's data, and
 * `cte`, the `events` CTE over `written` recording them. The data is built only when the tenant
 * has a subscription wanting one of the write's types (one check per statement), so a write for a
 * tenant without webhooks does not copy whole rows. Both are '' when the resource records none.
 */
export function keyedEvents(
  resource: Resource,
  kind: WriteKind,
  params: Params,
  scoped: string | null,
): { readonly returning: string; readonly cte: string } {
  const { events } = resource;
  const types = events && eventTypes(events, kind, params);
  if (!types) return { returning: '', cte: '' };
  const { subscribers } = events;
  const tenant = resource.tenant ? scoped : null;
  const wanted = [
    ...subscribed(subscribers, tenant),
    `sub.${ident(subscribers.types)} && ARRAY[${types.types.join(', ')}]`,
  ];
  return {
    returning:
      `, CASE WHEN EXISTS (SELECT FROM ${ident(subscribers.table)} sub WHERE ${wanted.join(' AND ')})` +
      ` THEN ${shown(resource, 't', params)} END AS "__event"`,
    cte: `, events AS (${record(subscribers, 'written w', tenant, types.type, 'w."__event"')} RETURNING 1)`,
  };
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
