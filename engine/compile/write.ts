/**
 * A write plan to one statement. The body travels as one JSON parameter that PostgreSQL expands
 * (json_to_recordset), so a bulk insert is one INSERT however many rows it has:
 *
 *   WITH scope AS (...),
 *        allowed AS (scope, unless the body names another organisation),
 *        written AS (INSERT ... | UPDATE ... | DELETE ... RETURNING t.*)
 *   SELECT authorized, allowed, affected rows, inserted rows, body, checks FROM written
 *
 * Checks that must undo the write (a singular response that is not one row, max-affected, an
 * unknown custom field) call engage_fail() in the final SELECT, which aborts the statement and
 * with it every data-modifying CTE.
 */
import type { DeletePlan, InsertPlan, UpdatePlan, WritePlan } from '../plan/types.ts';
import { arrayLiteral } from '../plan/values.ts';
import { jsonBody, projection, storedCustomFields } from './projection.ts';
import { where } from './read.ts';
import { type Scope, scopeCte } from './scope.ts';
import { type CompiledStatement, ident, Params, recordType } from './sql.ts';

const ALLOWED = '(SELECT organisation_id FROM allowed)';

function insert(plan: InsertPlan, params: Params): string {
  const table = ident(plan.resource.table);
  const names = plan.fields.map((f) => ident(f.name));
  // An item without an id gets a generated one, as the column default would give it.
  const values = plan.fields.map((f) =>
    f.name === 'id' ? 'coalesce(b."id", gen_random_uuid())' : `b.${ident(f.name)}`,
  );
  const source =
    plan.fields.length === 0
      ? `json_array_elements(${params.add(plan.rows, 'json')}) AS b`
      : `json_to_recordset(${params.add(plan.rows, 'json')}) AS b(${recordType(plan.fields)})`;
  let sql =
    `INSERT INTO ${table} AS t ("organisation_id"${names.map((n) => `, ${n}`).join('')})` +
    ` SELECT a.organisation_id${values.map((v) => `, ${v}`).join('')} FROM allowed a CROSS JOIN ${source}`;
  if (plan.conflict) {
    sql += ` ON CONFLICT ("organisation_id"${plan.conflict.target.map((f) => `, ${ident(f.name)}`).join('')})`;
    // The conflict target and the id identify the row; an upsert never changes them.
    const updates = plan.fields.filter((f) => !plan.conflict!.target.includes(f) && f.name !== 'id');
    sql +=
      plan.conflict.action === 'nothing'
        ? ' DO NOTHING'
        : ` DO UPDATE SET ${[...updates.map((f) => `${ident(f.name)} = EXCLUDED.${ident(f.name)}`), '"updated_at" = now()'].join(', ')}`;
  }
  // xmax is 0 on a row this statement inserted and set on one it updated: 201 against 200.
  return `${sql} RETURNING t.*, (t.xmax = 0) AS "__inserted"`;
}

function update(plan: UpdatePlan, params: Params): string {
  const table = ident(plan.resource.table);
  // Nothing to set and no custom values: nothing is updated, as PostgREST does for `{}`.
  if (plan.fields.length === 0 && plan.customValues === null) {
    return `SELECT t.*, false AS "__inserted" FROM ${table} t WHERE false`;
  }
  const filter = where(plan.where, params, ALLOWED);
  const sets = [...plan.fields.map((f) => `${ident(f.name)} = b.${ident(f.name)}`), '"updated_at" = now()'];
  const from = plan.fields.length
    ? ` FROM json_to_record(${params.add(plan.row, 'json')}) AS b(${recordType(plan.fields)})`
    : '';
  // Unknown keys or values that do not fit: nothing is written (and the checks below say why).
  const known =
    plan.customValues === null ? '' : ` AND NOT EXISTS (SELECT 1 FROM custom_in c WHERE c.id IS NULL OR NOT (${FITS}))`;
  return `UPDATE ${table} AS t SET ${sets.join(', ')}${from}${filter}${known} RETURNING t.*, false AS "__inserted"`;
}

function remove(plan: DeletePlan, params: Params): string {
  return `DELETE FROM ${ident(plan.resource.table)} AS t${where(plan.where, params, ALLOWED)} RETURNING t.*, false AS "__inserted"`;
}

/** A JSON value given for a custom field, as the text of its typed column (NULL when it does not fit). */
const CUSTOM_COLUMNS: ReadonlyArray<[string, string]> = [
  ['string_value', `CASE WHEN c.type = 'string' THEN c.value #>> '{}' END`],
  ['number_value', `CASE WHEN c.type = 'number' THEN (c.value #>> '{}')::numeric END`],
  ['boolean_value', `CASE WHEN c.type = 'boolean' THEN (c.value #>> '{}')::boolean END`],
  ['date_value', `CASE WHEN c.type = 'date' THEN (c.value #>> '{}')::date END`],
  ['datetime_value', `CASE WHEN c.type = 'datetime' THEN (c.value #>> '{}')::timestamptz END`],
  [
    'string_list_value',
    `CASE WHEN c.type = 'string_list' AND jsonb_typeof(c.value) = 'array' THEN ARRAY(SELECT jsonb_array_elements_text(c.value)) END`,
  ],
];

/** Whether a JSON value fits a custom field's type; null always fits (it clears the value). */
const FITS =
  `jsonb_typeof(c.value) = 'null' OR CASE c.type WHEN 'string' THEN jsonb_typeof(c.value) = 'string'` +
  ` WHEN 'number' THEN jsonb_typeof(c.value) = 'number' WHEN 'boolean' THEN jsonb_typeof(c.value) = 'boolean'` +
  ` WHEN 'date' THEN jsonb_typeof(c.value) = 'string' AND engage_is_date(c.value #>> '{}')` +
  ` WHEN 'datetime' THEN jsonb_typeof(c.value) = 'string' AND engage_is_timestamptz(c.value #>> '{}')` +
  ` WHEN 'string_list' THEN jsonb_typeof(c.value) = 'array' AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(c.value) e WHERE jsonb_typeof(e) <> 'string')` +
  ' ELSE false END';

/**
 * CTEs that write the custom-field values of every updated row: `custom_in` resolves each key to
 * the organisation's custom field of this entity (id NULL when there is none).
 */
function customValueCtes(plan: UpdatePlan, params: Params): { input: string; write: string } {
  const custom = plan.resource.customFields!;
  const values = params.add(plan.customValues, 'jsonb');
  const entity = params.add(custom.entity, 'text');
  const parent = ident(custom.parentKey);
  const columns = CUSTOM_COLUMNS.map(([name]) => ident(name));
  const input =
    `custom_in AS (SELECT kv.key, kv.value, cf.id, cf.type FROM jsonb_each(${values}) kv` +
    ` LEFT JOIN "custom_field" cf ON cf."organisation_id" = ${ALLOWED} AND cf."entity" = ${entity} AND cf."key" = kv.key)`;
  const write =
    `custom_written AS (INSERT INTO ${ident(custom.table)} ("organisation_id", ${parent}, "custom_field_id", "key", "value", ${columns.join(', ')})` +
    ` SELECT w."organisation_id", w."id", c.id, c.key, c.value #>> '{}', ${CUSTOM_COLUMNS.map(([, expr]) => expr).join(', ')}` +
    ` FROM written w CROSS JOIN custom_in c WHERE c.id IS NOT NULL` +
    ` ON CONFLICT ("organisation_id", ${parent}, "custom_field_id") DO UPDATE SET "key" = EXCLUDED."key", "value" = EXCLUDED."value", ` +
    `${columns.map((col) => `${col} = EXCLUDED.${col}`).join(', ')}, "updated_at" = now() RETURNING 1)`;
  return { input, write };
}

/**
 * Checks over the custom values: unknown keys and values of the wrong type abort the write.
 * `guard` holds when the organisation is known: before that, a key cannot be judged.
 */
const customChecks = (guard: string) => [
  `CASE WHEN ${guard} AND EXISTS (SELECT 1 FROM custom_in c WHERE c.id IS NULL) THEN engage_fail('UNKNOWN_FIELD', (SELECT json_agg(c.key) FROM custom_in c WHERE c.id IS NULL)::text) END`,
  `CASE WHEN ${guard} AND EXISTS (SELECT 1 FROM custom_in c WHERE c.id IS NOT NULL AND NOT (${FITS})) THEN engage_fail('VALIDATION_FAILED', (SELECT json_agg(json_build_object('field', c.key, 'message', 'must be a ' || replace(c.type, '_', ' ') || ' value')) FROM custom_in c WHERE c.id IS NOT NULL AND NOT (${FITS}))::text) END`,
];

export function compileWrite(plan: WritePlan, scope: Scope): CompiledStatement {
  const params = new Params();
  const claimed = params.add(arrayLiteral(plan.kind === 'delete' ? [] : plan.claimedOrganisations), 'uuid[]');
  let sql = `${scopeCte(scope, params)}, allowed AS (SELECT organisation_id FROM scope WHERE organisation_id = ALL(${claimed}))`;

  const custom = plan.kind === 'update' && plan.customValues !== null;
  const dml =
    plan.kind === 'insert'
      ? insert(plan, params)
      : plan.kind === 'update'
        ? update(plan, params)
        : remove(plan, params);
  if (custom) {
    // custom_in comes before `written`, whose WHERE refuses unknown keys; the values are written after.
    const ctes = customValueCtes(plan as UpdatePlan, params);
    sql += `, ${ctes.input}, written AS (${dml}), ${ctes.write}`;
  } else {
    sql += `, written AS (${dml})`;
  }

  // The representation: the written rows as the read path would show them. Custom values of
  // `*_details` are those stored before this statement overlaid with those it wrote (a statement
  // does not see its own writes).
  let customFields: string | null = null;
  const represented = plan.return === 'representation';
  if (represented && plan.customFields) {
    const keys = plan.columns.map((c) => c.key);
    const stored = storedCustomFields(plan.resource, keys, params);
    customFields = custom
      ? `nullif(coalesce(${stored}, '{}') || coalesce((SELECT jsonb_object_agg(c.key, c.value) FROM custom_in c WHERE c.id IS NOT NULL AND c.key <> ALL(${params.add(arrayLiteral(keys), 'text[]')})), '{}'), '{}')`
      : stored;
  }
  let body = 'NULL::text';
  if (represented) {
    const p = projection(plan.resource, plan.columns, customFields, params, false);
    body = `(SELECT ${jsonBody(p.row, plan.format)} FROM (SELECT ${p.select} FROM written t${p.join}) _t)`;
  }

  // One pass over the written rows gives the counts, the Location id and the checks.
  const checks: string[] = [];
  if (plan.format === 'object') {
    checks.push(
      `CASE WHEN ${ALLOWED} IS NOT NULL AND count(*) <> 1 THEN engage_fail('NOT_ACCEPTABLE', count(*)::text) END`,
    );
  }
  if (plan.maxAffected !== null) {
    checks.push(
      `CASE WHEN count(*) > ${params.add(String(plan.maxAffected), 'int8')} THEN engage_fail('MAX_AFFECTED', count(*)::text) END`,
    );
  }
  // A body naming another organisation is a 403, whatever its keys.
  if (custom) checks.push(...customChecks(`${ALLOWED} IS NOT NULL`));

  sql +=
    ' SELECT (SELECT count(*) FROM scope)::int4 AS authorized, (SELECT count(*) FROM allowed)::int4 AS allowed,' +
    ` count(*)::int4 AS affected, (count(*) FILTER (WHERE w."__inserted"))::int4 AS inserted,` +
    ` ${plan.resource.field('id') ? 'CASE WHEN count(*) = 1 THEN min(w."id"::text) END' : 'NULL::text'} AS location_id,` +
    ` ${body} AS body, ${params.conversions()} AS converted` +
    checks.map((check, i) => `, ${check} AS check_${i}`).join('') +
    ' FROM written w';
  return { text: sql, params: params.values };
}
