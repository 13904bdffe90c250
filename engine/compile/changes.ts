/**
 * The change log behind streams (handle/streams.ts): every committed change of a table whose
 * resource has `changes`, written by statement triggers (one INSERT per statement, whoever runs it:
 * the engine, another process, psql) into `engage_change`, each row stamped with its transaction's
 * xid8 and a sequence. A reader takes only rows of transactions older than every running one
 * (`pg_snapshot_xmin`), in (xid, seq) order: such a transaction has ended and no later one can take
 * an older xid, so a position once read is never passed by a change that commits later.
 */
import type { ReadPlan } from '../plan/types.ts';
import type { Resource } from '../registry/index.ts';
import { ReadCompiler } from './level.ts';
import { jsonBody } from './projection.ts';
import { TOKEN_ACTIVE } from './scope.ts';
import { type CompiledStatement, ident, Params } from './sql.ts';

export const CHANGE_LOG = 'engage_change';

/**
 * The log, and the highest position retention has pruned (a position before it may have lost
 * changes). Rows are json, not jsonb, and `at` has no index of its own: a bulk write of 40,000 rows
 * logged them in 242 ms against 380 with jsonb and an index on `at`, and pruning walks the key.
 */
export const CHANGE_LOG_TABLES = [
  `CREATE TABLE IF NOT EXISTS ${CHANGE_LOG} ("xid" xid8 NOT NULL DEFAULT pg_current_xact_id(),` +
    ' "seq" int8 GENERATED ALWAYS AS IDENTITY, "at" timestamptz NOT NULL DEFAULT clock_timestamp(),' +
    ' "table" text NOT NULL, "tenant" text, "old" json, "new" json, PRIMARY KEY ("xid", "seq"))',
  `CREATE TABLE IF NOT EXISTS ${CHANGE_LOG}_pruned ("one" boolean PRIMARY KEY DEFAULT true CHECK ("one"),` +
    ' "xid" xid8 NOT NULL, "seq" int8 NOT NULL)',
  `INSERT INTO ${CHANGE_LOG}_pruned ("xid", "seq") VALUES ('0', 0) ON CONFLICT DO NOTHING`,
];

/**
 * A resource's table's capture function, and its triggers: one per event, as transition tables
 * require, each writing the statement's rows into the log in one INSERT. The function is the
 * table's own, its columns named in static SQL (planned once per session). An update pairs each row
 * before with the row after by the primary key; a row whose key changed is a delete and an insert.
 */
export function captureTriggers(resource: Resource): string[] {
  const table = ident(resource.table);
  const capture = ident(`engage_capture_${resource.table}`);
  const name = `'${resource.table.replace(/'/g, "''")}'`;
  const keys = [...(resource.tenant ? [resource.tenant] : []), ...resource.key].map((f) => ident(f.name));
  const tenantOf = (side: string) => (resource.tenant ? `${side}.${ident(resource.tenant.name)}::text` : 'NULL');
  // A side of the full join without a row has every column null, its key too.
  const row = (side: string) => `CASE WHEN ${side}.${keys[0]} IS NULL THEN NULL ELSE to_json(${side}.*) END`;
  const paired = keys.map((k) => `engage_old.${k} = engage_new.${k}`).join(' AND ');
  const fn = `CREATE OR REPLACE FUNCTION ${capture}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO ${CHANGE_LOG} ("table", "tenant", "new")
      SELECT ${name}, ${tenantOf('engage_new')}, to_json(engage_new.*) FROM engage_new;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO ${CHANGE_LOG} ("table", "tenant", "old")
      SELECT ${name}, ${tenantOf('engage_old')}, to_json(engage_old.*) FROM engage_old;
  ELSE
    INSERT INTO ${CHANGE_LOG} ("table", "tenant", "old", "new")
      SELECT ${name}, coalesce(${tenantOf('engage_new')}, ${tenantOf('engage_old')}), ${row('engage_old')},
        ${row('engage_new')}
      FROM engage_old FULL JOIN engage_new ON ${paired};
  END IF;
  RETURN NULL;
END
$$`;
  const events = {
    insert: 'INSERT ON {t} REFERENCING NEW TABLE AS engage_new',
    update: 'UPDATE ON {t} REFERENCING OLD TABLE AS engage_old NEW TABLE AS engage_new',
    delete: 'DELETE ON {t} REFERENCING OLD TABLE AS engage_old',
  };
  return [
    fn,
    ...Object.entries(events).map(
      ([event, on]) =>
        `CREATE OR REPLACE TRIGGER ${CHANGE_LOG}_${event} AFTER ${on.replace('{t}', table)}` +
        ` FOR EACH STATEMENT EXECUTE FUNCTION ${capture}()`,
    ),
  ];
}

/** A change as the log reads it: its position, its table and tenant, and the row before and after. */
export type ChangeRow = {
  /** The newest position every change before which has been read: the log's watermark. */
  readonly watermark: string;
  readonly xid: string | null;
  readonly seq: string | null;
  readonly table: string | null;
  readonly tenant: string | null;
  readonly old: string | null;
  readonly new: string | null;
  /** Milliseconds since the change was written, when read. */
  readonly age: number | null;
};

/**
 * The changes after (xid, seq) of `tables` (of one tenant, when given), up to `through` or up to the
 * watermark, at most `limit`, in order; one row with the watermark alone when there are none.
 */
export function compileChangesAfter(
  after: { xid: string; seq: string },
  tables: readonly string[],
  options: { readonly tenant?: string; readonly through?: { xid: string; seq: string }; readonly limit: number },
): CompiledStatement {
  const params = new Params();
  const position = `(c."xid", c."seq") > (${params.add(after.xid, 'xid8')}, ${params.add(after.seq, 'int8')})`;
  const where = [
    position,
    'c."xid" < w.x',
    `c."table" = ANY(${params.add(`{${tables.map(quoted).join(',')}}`, 'text[]')})`,
  ];
  if (options.tenant !== undefined) where.push(`c."tenant" = ${params.add(options.tenant, 'text')}`);
  if (options.through) {
    where.push(
      `(c."xid", c."seq") <= (${params.add(options.through.xid, 'xid8')}, ${params.add(options.through.seq, 'int8')})`,
    );
  }
  const text =
    'WITH w AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS x)' +
    ' SELECT w.x::text AS watermark, c."xid"::text AS xid, c."seq"::text AS seq, c."table", c."tenant",' +
    ' c."old"::text AS old, c."new"::text AS new,' +
    ' (extract(epoch FROM clock_timestamp() - c."at") * 1000)::float8 AS age' +
    ` FROM w LEFT JOIN LATERAL (SELECT * FROM ${CHANGE_LOG} c WHERE ${where.join(' AND ')}` +
    ` ORDER BY c."xid", c."seq" LIMIT ${params.add(String(options.limit), 'int8')}) c ON true`;
  return { text, params: params.values };
}

/** An element of a text[] literal. */
const quoted = (text: string) => `"${text.replace(/["\\]/g, '\\$&')}"`;

/**
 * A stream's first statement: its read with no rows (the token checked, the filters' values
 * converted), the snapshot it would read, and the highest position retention has pruned.
 */
export function compileSubscribe(read: CompiledStatement): CompiledStatement {
  const text =
    `SELECT r.authorized, r.tenant, pg_current_snapshot()::text AS snapshot,` +
    ` (SELECT "xid"::text || '_' || "seq" FROM ${CHANGE_LOG}_pruned) AS pruned FROM (${read.text}) r`;
  return { text, params: read.params };
}

/** Deletes changes older than `hours` (a bounded number at a time) and moves the pruned position past them. */
export function compilePrune(hours: number, limit: number): CompiledStatement {
  const params = new Params();
  const text =
    `WITH gone AS (DELETE FROM ${CHANGE_LOG} WHERE ("xid", "seq") IN (SELECT "xid", "seq" FROM ${CHANGE_LOG}` +
    ` WHERE "at" < now() - ${params.add(String(hours), 'float8')} * interval '1 hour'` +
    ` ORDER BY "xid", "seq" LIMIT ${params.add(String(limit), 'int8')}) RETURNING "xid", "seq"),` +
    ' last AS (SELECT "xid", "seq" FROM gone ORDER BY "xid" DESC, "seq" DESC LIMIT 1)' +
    ` UPDATE ${CHANGE_LOG}_pruned p SET "xid" = last."xid", "seq" = last."seq" FROM last` +
    ' WHERE (p."xid", p."seq") < (last."xid", last."seq")' +
    ' RETURNING (SELECT count(*) FROM gone)::int4 AS pruned';
  return { text, params: params.values };
}

/** Which of these token hashes still authorize: neither revoked nor expired. */
export function compileActiveTokens(table: string, hashes: readonly string[]): CompiledStatement {
  const params = new Params();
  const list = params.add(`{${hashes.map(quoted).join(',')}}`, 'text[]');
  return {
    text: `SELECT "token_hash" AS hash FROM ${ident(table)} WHERE "token_hash" = ANY(${list}) AND ${TOKEN_ACTIVE}`,
    params: params.values,
  };
}

/** A stream's query, for one tenant, to evaluate changed rows against. */
export interface StreamQuery {
  readonly plan: ReadPlan;
  /** The tenant's value as text, or null for a shared resource or a single-tenant registry. */
  readonly tenant: string | null;
}

/**
 * Which versions of changed rows each query lets through, and each such row as the query shows it,
 * in one statement: the versions are one JSON array, each query reads the ones it is given (by
 * their place, from 1) as its table's rows, with its tenant, filters and projection:
 *
 *   SELECT <q> AS q, v.k, (SELECT (json_agg(_t) -> 0)::text FROM (<the query's level over
 *     json_populate_record(NULL::<table>, v.v)>) _t) AS body
 *   FROM json_array_elements($1) WITH ORDINALITY v(v, k) WHERE v.k = ANY(<its versions>)
 *   UNION ALL ...
 */
export function compileMatches(
  versions: readonly string[],
  queries: readonly { readonly query: StreamQuery; readonly versions: readonly number[] }[],
): CompiledStatement {
  const params = new Params();
  const all = params.add(`[${versions.join(',')}]`, 'json');
  const branches = queries.map(({ query, versions: mine }, i) => {
    const scoped = query.tenant === null ? 'NULL' : params.add(query.tenant, query.plan.resource.tenant!.type.sql);
    const from = `json_populate_record(NULL::${ident(query.plan.resource.table)}, v.v)`;
    const compiler = new ReadCompiler(params, scoped, { level: query.plan, from });
    const level = compiler.level(query.plan, 't', null, { paged: false });
    const body = jsonBody(level.row, 'object', params);
    return (
      `SELECT ${i}::int4 AS q, v.k::int4 AS k, (SELECT ${body} FROM (${level.sql}) _t) AS body` +
      ` FROM json_array_elements(${all}) WITH ORDINALITY v(v, k)` +
      ` WHERE v.k = ANY(${params.add(`{${mine.join(',')}}`, 'int8[]')})`
    );
  });
  return { text: branches.join(' UNION ALL '), params: params.values };
}
