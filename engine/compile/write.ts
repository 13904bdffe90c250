/**
 * A write plan to one statement. The body travels as one JSON parameter that PostgreSQL expands
 * (json_to_recordset), so a bulk insert is one INSERT however many rows it has:
 *
 *   WITH scope AS (...),
 *        allowed AS (scope, unless the body names another tenant),
 *        written AS (INSERT ... | UPDATE ... | DELETE ... RETURNING t.*),
 *        events AS (INSERT INTO the outbox, an event per written row: compile/events.ts),
 *        children_N AS (INSERT of records created with the items: compile/nested.ts)
 *   SELECT authorized, allowed, affected rows, inserted rows, body, checks FROM written
 *
 * Checks that must undo the write (a singular response that is not one row, max-affected, an
 * unknown custom field) call engage_fail() in the final SELECT, which aborts the statement and
 * with it every data-modifying CTE.
 */

import { CUSTOM_FIELD_TYPES } from '../custom-fields.ts';
import type { DeletePlan, InsertPlan, PlannedCondition, UpdatePlan, WritePlan } from '../plan/types.ts';
import { arrayLiteral } from '../plan/values.ts';
import type { Field, Resource } from '../registry/index.ts';
import { customValueFits, customValueText, storedCustomFields, upsertCustomValues } from './custom-fields.ts';
import { eventsCte } from './events.ts';
import { type IdempotencyKey, idempotentWrite } from './idempotency.ts';
import { ReadCompiler } from './level.ts';
import { childrenCtes, referenceColumns, referenceValue } from './nested.ts';
import { jsonBody } from './projection.ts';
import { type Scope, type Scoping, scopeCte, tenantFilter } from './scope.ts';
import { BOUND, type CompiledStatement, ident, Params, recordType } from './sql.ts';
import { version } from './version.ts';
import { condition } from './where.ts';

/** Whether the write may go ahead: the scope resolved, and the body names no other tenant. */
const ALLOWED = 'EXISTS (SELECT FROM allowed)';

/** A custom key of the body that is unknown, or whose value does not fit. */
const CUSTOM_MISFIT = 'SELECT 1 FROM custom_in c WHERE c.id IS NULL OR NOT c.fits';

/** Every update moves `updated_at`, where the table has it. */
const touched = (resource: Resource): string[] => (resource.updatedAt ? ['"updated_at" = now()'] : []);

/**
 * A write's rows in the tenant that pass its filters, when the write is allowed: ` WHERE ...` over
 * `t`. The tenant column is compared with the scope's value itself, a parameter once the tenant is
 * known, so Citus routes the write to one shard.
 */
function where(resource: Resource, conditions: readonly PlannedCondition[], params: Params, scoped: string): string {
  const ctx = { params, table: 't', scoped };
  const all = [ALLOWED, ...tenantFilter(resource, 't', scoped), ...conditions.map((c) => condition(c, ctx))];
  return ` WHERE ${all.join(' AND ')}`;
}

/** A field's value from item `b`; a key field the item leaves out gets what the database generates for it. */
const itemValue = (resource: Resource, field: Field) =>
  resource.key.includes(field) && field.defaultSql !== undefined
    ? `coalesce(b.${ident(field.name)}, ${field.defaultSql})`
    : `b.${ident(field.name)}`;

/**
 * An insert of `rows` giving `fields`; each row takes its tenant from the scope's value, once per
 * allowed scope row.
 */
function insertRows(
  plan: InsertPlan,
  fields: readonly Field[],
  rows: string,
  params: Params,
  scoped: string,
  name?: string,
): string {
  const { resource } = plan;
  const table = ident(resource.table);
  const own = resource.tenant ? [ident(resource.tenant.name)] : [];
  const names = [...own, ...fields.map((f) => ident(f.name))];
  const values = [
    ...own.map(() => scoped),
    ...fields.map((f) => referenceValue(plan, f, params, scoped) ?? itemValue(resource, f)),
  ];
  const columns = [...(fields.length ? [recordType(fields)] : []), ...referenceColumns(plan)];
  const source =
    columns.length === 0
      ? `json_array_elements(${params.add(rows, 'json', name)}) AS b`
      : `json_to_recordset(${params.add(rows, 'json', name)}) AS b(${columns.join(', ')})`;
  // With no column to give (`{}` on a shared resource), each row is the table's defaults.
  let sql = names.length
    ? `INSERT INTO ${table} AS t (${names.join(', ')}) SELECT ${values.join(', ')} FROM allowed a CROSS JOIN ${source}`
    : `INSERT INTO ${table} AS t SELECT FROM allowed a CROSS JOIN ${source}`;
  if (plan.conflict) {
    const target = [...own, ...plan.conflict.target.map((f) => ident(f.name))];
    sql += ` ON CONFLICT (${target.join(', ')})`;
    // The conflict target and the key identify the row; an upsert never changes them.
    const updates = fields.filter((f) => !plan.conflict!.target.includes(f) && !resource.key.includes(f));
    const sets = [...updates.map((f) => `${ident(f.name)} = EXCLUDED.${ident(f.name)}`), ...touched(resource)];
    // Nothing else to set: the row is still updated (and returned), as PostgREST does.
    if (sets.length === 0) sets.push(`${target.at(-1)} = EXCLUDED.${target.at(-1)}`);
    sql += plan.conflict.action === 'nothing' ? ' DO NOTHING' : ` DO UPDATE SET ${sets.join(', ')}`;
  }
  // xmax is 0 on a row this statement inserted and set on one it updated: 201 against 200. A view's
  // rows have no xmax; an insert through it inserts.
  return `${sql} RETURNING t.*, ${resource.view ? 'true' : '(t.xmax = 0)'} AS "__inserted"`;
}

/**
 * The insert: one for every item, or with groups (`missing=default`) one per group in a CTE of its
 * own (`inserted_N`, in `ctes`), their rows together as the written ones.
 */
function insert(plan: InsertPlan, params: Params, scoped: string): { ctes: string; dml: string } {
  if (plan.groups === null)
    return { ctes: '', dml: insertRows(plan, plan.fields, plan.rows, params, scoped, BOUND.row) };
  // Fields set through a reference are in every group: the reference's columns are in every item.
  const setByReference = new Set(plan.nested.references.flatMap((r) => r.relation.parentFields));
  const referenced = plan.fields.filter((f) => setByReference.has(f.name));
  const ctes = plan.groups.map((group, i) => {
    const fields = [...group.fields, ...referenced.filter((f) => !group.fields.includes(f))];
    return `, inserted_${i} AS (${insertRows(plan, fields, group.rows, params, scoped)})`;
  });
  return { ctes: ctes.join(''), dml: plan.groups.map((_, i) => `SELECT * FROM inserted_${i}`).join(' UNION ALL ') };
}

/**
 * `SET` of the fields each item of `b` gives (its `__keys`), the others kept: an update by key,
 * here and in imports.
 */
export const givenSets = (fields: readonly Field[], params: Params): string[] =>
  fields.map(
    (f) =>
      `${ident(f.name)} = CASE WHEN ${params.add(f.name, 'text')} = ANY(b."__keys")` +
      ` THEN b.${ident(f.name)} ELSE t.${ident(f.name)} END`,
  );

/** A PATCH by key: each item of the body changes the record its key names, in the filters' rows. */
function updateByKey(plan: UpdatePlan, params: Params, filter: string): string {
  const { resource } = plan;
  const sets = [...givenSets(plan.fields, params), ...touched(resource)];
  if (sets.length === 0) sets.push(`${ident(resource.key[0]!.name)} = t.${ident(resource.key[0]!.name)}`);
  const items = `json_to_recordset(${params.add(plan.row, 'json')}) AS b(${recordType([...resource.key, ...plan.fields])}, "__keys" text[])`;
  const match = resource.key.map((f) => `t.${ident(f.name)} = b.${ident(f.name)}`).join(' AND ');
  return (
    `UPDATE ${ident(resource.table)} AS t SET ${sets.join(', ')} FROM ${items}${filter} AND ${match}` +
    ' RETURNING t.*, false AS "__inserted"'
  );
}

/** `filter`: the WHERE of the rows to update (where(), and the If-Match versions). */
function update(plan: UpdatePlan, params: Params, filter: string): string {
  if (plan.items !== null) return updateByKey(plan, params, filter);
  const { resource } = plan;
  const table = ident(resource.table);
  // Nothing to set and no custom values: nothing is updated, as PostgREST does for `{}` (the
  // filters stay, so each of the statement's parameters is used).
  if (plan.fields.length === 0 && plan.customValues === null) {
    return `SELECT t.*, false AS "__inserted" FROM ${table} t${filter} AND false`;
  }
  const sets = [...plan.fields.map((f) => `${ident(f.name)} = b.${ident(f.name)}`), ...touched(resource)];
  // Only custom values to write, on a table without updated_at: the rows are still the ones updated.
  if (sets.length === 0) sets.push(`${ident(resource.key[0]!.name)} = t.${ident(resource.key[0]!.name)}`);
  const from = plan.fields.length
    ? ` FROM json_to_record(${params.add(plan.row, 'json', BOUND.row)}) AS b(${recordType(plan.fields)})`
    : '';
  // Unknown keys or values that do not fit: nothing is written (and the checks below say why).
  const known = plan.customValues === null ? '' : ` AND NOT EXISTS (${CUSTOM_MISFIT})`;
  return `UPDATE ${table} AS t SET ${sets.join(', ')}${from}${filter}${known} RETURNING t.*, false AS "__inserted"`;
}

function remove(plan: DeletePlan, filter: string): string {
  return `DELETE FROM ${ident(plan.resource.table)} AS t${filter} RETURNING t.*, false AS "__inserted"`;
}

/** Messages for values that do not fit, by custom-field type: the ones bodies and imports give. */
const MISFIT_MESSAGES = JSON.stringify(
  Object.fromEntries(Object.entries(CUSTOM_FIELD_TYPES).map(([type, spec]) => [type, spec.message])),
);

/**
 * CTEs around the update of `*_details`: `custom_in` resolves each custom key of the body to the
 * tenant's custom field of this entity (id NULL when there is none) and whether its value
 * fits; `custom_written` writes the values of every updated row.
 */
function customValueCtes(plan: UpdatePlan, params: Params, tenant: string): { input: string; write: string } {
  const { resource } = plan;
  const custom = resource.customFields!;
  const values = params.add(plan.customValues, 'jsonb');
  const entity = params.add(custom.entity, 'text');
  const own = custom.tenant ? `cf.${ident(custom.tenant)} = ${tenant} AND ` : '';
  const input =
    `custom_in AS (SELECT kv.key, kv.value, cf.id, cf.type, ${customValueFits('kv.value', 'cf.type', params)} AS fits` +
    ` FROM jsonb_each(${values}) kv LEFT JOIN ${ident(custom.definitions)} cf` +
    ` ON ${own}cf."entity" = ${entity} AND cf."key" = kv.key)`;
  const source =
    `(SELECT ${custom.tenant ? `w.${ident(custom.tenant)} AS tenant, ` : ''}w.${ident(resource.key[0]!.name)} AS parent,` +
    ' i.id AS field_id, i.key, i.type, i.value FROM written w CROSS JOIN custom_in i WHERE i.id IS NOT NULL) c';
  return { input, write: `custom_written AS (${upsertCustomValues(custom, source)} RETURNING 1)` };
}

/**
 * Checks over the custom values: unknown keys and values of the wrong type abort the write.
 * `guard` holds when the tenant is known: before that, a key cannot be judged.
 */
function customChecks(guard: string, params: Params): string[] {
  const unknown = 'SELECT 1 FROM custom_in c WHERE c.id IS NULL';
  const misfits = 'FROM custom_in c WHERE c.id IS NOT NULL AND NOT c.fits';
  const messages = params.add(MISFIT_MESSAGES, 'jsonb');
  const problems = `json_agg(json_build_object('field', c.key, 'message', ${messages} ->> c.type))`;
  return [
    `CASE WHEN ${guard} AND EXISTS (${unknown}) THEN` +
      ` engage_fail('UNKNOWN_FIELD', (SELECT json_agg(c.key) FROM custom_in c WHERE c.id IS NULL)::text) END`,
    `CASE WHEN ${guard} AND EXISTS (SELECT 1 ${misfits}) THEN` +
      ` engage_fail('VALIDATION_FAILED', (SELECT ${problems} ${misfits})::text) END`,
  ];
}

/**
 * With `key` (an Idempotency-Key), the statement runs the write only for the request that takes the
 * key first, and stores its own result row with it (compile/idempotency.ts).
 */
export function compileWrite(
  plan: WritePlan,
  scope: Scope | undefined,
  scoping: Scoping,
  key?: IdempotencyKey,
): CompiledStatement {
  const params = new Params();
  const own = plan.resource.tenant;
  // The scope's values first, as in every statement (scopeValues); then the tenants the body names.
  const { cte, scoped, column } = scopeCte(scope, params, scoping);
  const claimed =
    own && plan.kind !== 'delete'
      ? params.add(arrayLiteral(plan.claimedTenants), `${own.type.sql}[]`, BOUND.claimed)
      : null;
  const idempotent = key && idempotentWrite(params, column, key);
  let sql = `${cte}, ${idempotent?.ctes ?? ''}`;
  // A body naming another tenant than the caller's leaves `allowed` empty: nothing is written; so
  // does a key another request took.
  const go = [...(own && claimed ? [`${column} = ALL(${claimed})`] : []), ...(idempotent ? [idempotent.go] : [])];
  sql += ` allowed AS (SELECT * FROM scope${go.length ? ` WHERE ${go.join(' AND ')}` : ''})`;
  const custom = plan.kind === 'update' && plan.customValues !== null;
  const ifMatch = plan.kind === 'insert' ? null : plan.ifMatch;
  let filter = plan.kind === 'insert' ? '' : where(plan.resource, plan.where, params, scoped);
  // A PATCH by key changes one record per item, or nothing.
  const items = plan.kind === 'update' ? plan.items : null;
  if (ifMatch && !ifMatch.any) {
    // The rows the filters match, counted apart: any not written (at another version, or changed by
    // a write this one waited for) fails the precondition below. By key, the items are the count.
    if (items === null) sql += `, matched AS (SELECT count(*) AS n FROM ${ident(plan.resource.table)} t${filter})`;
    filter += ` AND ${version('t')} = ANY(${params.add(arrayLiteral(ifMatch.versions), 'text[]')})`;
  }
  const { ctes: inserts, dml } =
    plan.kind === 'insert'
      ? insert(plan, params, scoped)
      : { ctes: '', dml: plan.kind === 'update' ? update(plan, params, filter) : remove(plan, filter) };
  if (custom) {
    // custom_in comes before `written`, whose WHERE refuses unknown keys; the values are written after.
    const ctes = customValueCtes(plan as UpdatePlan, params, scoped);
    sql += `, ${ctes.input}, written AS (${dml}), ${ctes.write}`;
  } else {
    sql += `${inserts}, written AS (${dml})`;
  }
  sql += eventsCte(plan.resource, plan.kind, params, scoped);
  if (plan.kind === 'insert') sql += childrenCtes(plan, params, scoped);

  // The representation: the written rows as the read path would show them. Custom values of
  // `*_details` are those stored before this statement overlaid with those it wrote (a statement
  // does not see its own writes).
  let customFields: string | null = null;
  const represented = plan.return === 'representation';
  const { representation } = plan;
  if (represented && representation.customFields) {
    const keys = representation.columns.map((c) => c.key);
    const csv = plan.format === 'csv';
    const stored = storedCustomFields(plan.resource, keys, params, { scoped, text: csv });
    // For CSV a value is converted to its type, so only one that fits (the others abort the write).
    const written = csv ? `CASE WHEN c.fits THEN ${customValueText('c.value', 'c.type')} END` : 'c.value';
    customFields = custom
      ? `nullif(coalesce(${stored}, '{}') || coalesce((SELECT jsonb_object_agg(c.key, ${written}) FROM custom_in c` +
        ` WHERE c.id IS NOT NULL AND c.key <> ALL(${params.add(arrayLiteral(keys), 'text[]')})), '{}'), '{}')`
      : stored;
  }
  let body = 'NULL::text';
  if (represented) {
    const rows = new ReadCompiler(params, scoped).level(representation, 't', null, {
      paged: false,
      written: { source: 'written t', customFields },
    });
    body = `(SELECT ${jsonBody(rows.row, plan.format, params)} FROM (${rows.sql}) _t)`;
  }

  // The version of the one record written, for its ETag.
  const writtenVersion =
    plan.resource.updatedAt && plan.kind !== 'delete' ? `CASE WHEN count(*) = 1 THEN min(${version('w')}) END` : 'NULL';

  // One pass over the written rows gives the counts, the Location id and the checks.
  const checks: string[] = [];
  if (items !== null) {
    // An item whose record is not the caller's, is filtered out, or (with If-Match) changed.
    const code = ifMatch ? 'PRECONDITION_FAILED' : 'ITEMS_UNMATCHED';
    const n = params.add(String(items), 'int8');
    checks.push(`CASE WHEN ${ALLOWED} AND count(*) <> ${n} THEN engage_fail('${code}', (${n} - count(*))::text) END`);
  } else if (ifMatch) {
    // No row written fails it too, unless a custom value did not fit: that check below says so.
    const changed = ifMatch.any ? '' : ' OR count(*) <> (SELECT n FROM matched)';
    const fitting = custom ? ` AND NOT EXISTS (${CUSTOM_MISFIT})` : '';
    checks.push(
      `CASE WHEN ${ALLOWED}${fitting} AND (count(*) = 0${changed}) THEN engage_fail('PRECONDITION_FAILED', '') END`,
    );
  }
  if (plan.format === 'object') {
    checks.push(`CASE WHEN ${ALLOWED} AND count(*) <> 1 THEN engage_fail('NOT_ACCEPTABLE', count(*)::text) END`);
  }
  if (plan.maxAffected !== null) {
    checks.push(
      `CASE WHEN count(*) > ${params.add(String(plan.maxAffected), 'int8')}` +
        ` THEN engage_fail('MAX_AFFECTED', count(*)::text) END`,
    );
  }
  // A body naming another tenant is a 403, whatever its keys.
  if (custom) checks.push(...customChecks(ALLOWED, params));

  const select =
    ` SELECT (SELECT count(*) FROM scope)::int4 AS authorized, ${scoped}::text AS tenant,` +
    ' (SELECT count(*) FROM allowed)::int4 AS allowed,' +
    ` count(*)::int4 AS affected, (count(*) FILTER (WHERE w."__inserted"))::int4 AS inserted,` +
    ` CASE WHEN count(*) = 1 THEN min(json_build_array(${plan.resource.key.map((f) => `w.${ident(f.name)}`).join(', ')})::text) END` +
    ' AS location,' +
    ` ${body} AS body, ${params.evaluations()} AS converted, ${writtenVersion} AS version` +
    checks.map((check, i) => `, ${check} AS check_${i}`).join('') +
    ' FROM written w';
  sql += idempotent ? idempotent.finish(select) : select;
  return { text: sql, params: params.values, parts: params.parts, named: params.named };
}
