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

import { CUSTOM_FIELD_TYPES } from '../custom-fields.ts';
import type { DeletePlan, InsertPlan, UpdatePlan, WritePlan } from '../plan/types.ts';
import { arrayLiteral } from '../plan/values.ts';
import { customValueFits, customValueText, storedCustomFields, upsertCustomValues } from './custom-fields.ts';
import { ReadCompiler } from './level.ts';
import { jsonBody } from './projection.ts';
import { where } from './read.ts';
import { type Scope, scopeCte } from './scope.ts';
import { type CompiledStatement, ident, Params, recordType } from './sql.ts';

const ALLOWED = '(SELECT organisation_id FROM allowed)';
/** Every update moves `updated_at`. */
const NOW = '"updated_at" = now()';

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
        : ` DO UPDATE SET ${[...updates.map((f) => `${ident(f.name)} = EXCLUDED.${ident(f.name)}`), NOW].join(', ')}`;
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
  const sets = [...plan.fields.map((f) => `${ident(f.name)} = b.${ident(f.name)}`), NOW];
  const from = plan.fields.length
    ? ` FROM json_to_record(${params.add(plan.row, 'json')}) AS b(${recordType(plan.fields)})`
    : '';
  // Unknown keys or values that do not fit: nothing is written (and the checks below say why).
  const known =
    plan.customValues === null ? '' : ' AND NOT EXISTS (SELECT 1 FROM custom_in c WHERE c.id IS NULL OR NOT c.fits)';
  return `UPDATE ${table} AS t SET ${sets.join(', ')}${from}${filter}${known} RETURNING t.*, false AS "__inserted"`;
}

function remove(plan: DeletePlan, params: Params): string {
  const filter = where(plan.where, params, ALLOWED);
  return `DELETE FROM ${ident(plan.resource.table)} AS t${filter} RETURNING t.*, false AS "__inserted"`;
}

/** Messages for values that do not fit, by custom-field type: the ones bodies and imports give. */
const MISFIT_MESSAGES = JSON.stringify(
  Object.fromEntries(Object.entries(CUSTOM_FIELD_TYPES).map(([type, spec]) => [type, spec.message])),
);

/**
 * CTEs around the update of `*_details`: `custom_in` resolves each custom key of the body to the
 * organisation's custom field of this entity (id NULL when there is none) and whether its value
 * fits; `custom_written` writes the values of every updated row.
 */
function customValueCtes(plan: UpdatePlan, params: Params): { input: string; write: string } {
  const custom = plan.resource.customFields!;
  const values = params.add(plan.customValues, 'jsonb');
  const entity = params.add(custom.entity, 'text');
  const input =
    `custom_in AS (SELECT kv.key, kv.value, cf.id, cf.type, ${customValueFits('kv.value', 'cf.type', params)} AS fits` +
    ` FROM jsonb_each(${values}) kv LEFT JOIN ${ident(custom.definitions)} cf` +
    ` ON cf."organisation_id" = ${ALLOWED} AND cf."entity" = ${entity} AND cf."key" = kv.key)`;
  const source =
    '(SELECT w."organisation_id", w."id" AS parent, i.id AS field_id, i.key, i.type, i.value' +
    ' FROM written w CROSS JOIN custom_in i WHERE i.id IS NOT NULL) c';
  return { input, write: `custom_written AS (${upsertCustomValues(custom, source)} RETURNING 1)` };
}

/**
 * Checks over the custom values: unknown keys and values of the wrong type abort the write.
 * `guard` holds when the organisation is known: before that, a key cannot be judged.
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

export function compileWrite(plan: WritePlan, scope: Scope): CompiledStatement {
  const params = new Params();
  const claimed = params.add(arrayLiteral(plan.kind === 'delete' ? [] : plan.claimedOrganisations), 'uuid[]');
  const { cte, scoped } = scopeCte(scope, params);
  let sql = `${cte},`;
  sql += ` allowed AS (SELECT organisation_id FROM scope WHERE organisation_id = ALL(${claimed}))`;

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
  const { representation } = plan;
  if (represented && representation.customFields) {
    const keys = representation.columns.map((c) => c.key);
    const csv = plan.format === 'csv';
    const stored = storedCustomFields(plan.resource.customFields!, keys, params, { scoped, text: csv });
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

  // One pass over the written rows gives the counts, the Location id and the checks.
  const checks: string[] = [];
  if (plan.format === 'object') {
    checks.push(
      `CASE WHEN ${ALLOWED} IS NOT NULL AND count(*) <> 1 THEN engage_fail('NOT_ACCEPTABLE', count(*)::text) END`,
    );
  }
  if (plan.maxAffected !== null) {
    checks.push(
      `CASE WHEN count(*) > ${params.add(String(plan.maxAffected), 'int8')}` +
        ` THEN engage_fail('MAX_AFFECTED', count(*)::text) END`,
    );
  }
  // A body naming another organisation is a 403, whatever its keys.
  if (custom) checks.push(...customChecks(`${ALLOWED} IS NOT NULL`, params));

  sql +=
    ' SELECT (SELECT count(*) FROM scope)::int4 AS authorized, (SELECT count(*) FROM allowed)::int4 AS allowed,' +
    ` count(*)::int4 AS affected, (count(*) FILTER (WHERE w."__inserted"))::int4 AS inserted,` +
    ` ${plan.resource.field('id') ? 'CASE WHEN count(*) = 1 THEN min(w."id"::text) END' : 'NULL::text'}` +
    ' AS location_id,' +
    ` ${body} AS body, ${params.evaluations()} AS converted` +
    checks.map((check, i) => `, ${check} AS check_${i}`).join('') +
    ' FROM written w';
  return { text: sql, params: params.values };
}
