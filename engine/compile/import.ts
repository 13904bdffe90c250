/**
 * The statements of a batch import (plan/import.ts checks the items): look-ups of the tenant's
 * custom fields, of rows by a column's values, and of fresh keys; then set-based inserts, updates
 * and custom values. A handful of statements per batch whatever its size, run by the caller in one
 * transaction.
 */
import type { CustomField } from '../custom-fields.ts';
import type { Row } from '../db/port.ts';
import type { ColumnType } from '../field-kinds.ts';
import { byGivenFields } from '../plan/body.ts';
import { arrayLiteral } from '../plan/values.ts';
import type { CustomFields, Field, Resource, Tenancy } from '../registry/index.ts';
import { upsertCustomValues } from './custom-fields.ts';
import { keyedEvents } from './events.ts';
import { type CompiledStatement, ident, Params, recordType } from './sql.ts';
import { givenSets } from './write.ts';

/** Where an import writes: the tenant's value and column (none in a single-tenant registry). */
export interface ImportScope {
  readonly tenancy: Tenancy | null;
  readonly tenant: string | null;
}

const statement = (text: string, params: Params): CompiledStatement => ({ text, params: params.values });

/** `AND t."workspace_id" = $n`, for a table that has the tenant column. */
function tenantCondition(alias: string, column: string | null, scope: ImportScope, params: Params): string {
  if (column === null || scope.tenancy === null || scope.tenant === null) return '';
  return ` AND ${alias}.${ident(column)} = ${params.add(scope.tenant, scope.tenancy.type.sql)}`;
}

/** The tenant's custom fields of `custom`'s entity: rows of id, key and type. */
export function customFieldsOf(custom: CustomFields, scope: ImportScope): CompiledStatement {
  const params = new Params();
  return statement(
    `SELECT d."id"::text AS id, d."key", d."type" FROM ${ident(custom.definitions)} d` +
      ` WHERE d."entity" = ${params.add(custom.entity, 'text')}${tenantCondition('d', custom.tenant, scope, params)}`,
    params,
  );
}

export interface LookUp {
  readonly table: string;
  /** Whether the table's rows have the tenant column (a look-up then stays inside the tenant). */
  readonly tenant: string | null;
  readonly column: string;
  readonly type: ColumnType;
  /** The column whose value each row found answers with. */
  readonly answer: string;
}

/**
 * Rows whose `column` is one of `values`: rows of `value` and `answer` as text. A join on unnest
 * rather than `= ANY($n)`: a generic plan compares every row with every element of ANY, which a
 * batch of 20,000 keys makes slow.
 */
export function lookUp(spec: LookUp, values: readonly string[], scope: ImportScope): CompiledStatement {
  const params = new Params();
  const column = `t.${ident(spec.column)}`;
  return statement(
    `SELECT ${column}::text AS value, t.${ident(spec.answer)}::text AS answer FROM ${ident(spec.table)} t` +
      ` JOIN unnest(${params.add(arrayLiteral(values), `${spec.type.sql}[]`)}) AS k(value)` +
      ` ON ${column} = k.value WHERE true${tenantCondition('t', spec.tenant, scope, params)}`,
    params,
  );
}

/** `count` new values of a key field's default (a sequence's next values), as text. */
export function freshKeys(key: Field, count: number): CompiledStatement {
  const params = new Params();
  return statement(
    `SELECT (${key.defaultSql})::text AS key FROM generate_series(1, ${params.add(String(count), 'int')})`,
    params,
  );
}

/**
 * New rows, each with its key given; a field a row leaves out gets its column's default, whatever
 * it is: rows are inserted by the fields they give, each set of fields in an INSERT of its own. Rows
 * whose matched value (`imports.key`) another transaction took meanwhile are not inserted: the
 * statement returns the keys of those it inserted.
 */
export function insertRows(resource: Resource, rows: readonly Row[], scope: ImportScope): CompiledStatement {
  const key = ident(resource.key[0]!.name);
  const params = new Params();
  const tenant = resource.tenant && scope.tenant !== null && scope.tenancy ? resource.tenant : null;
  const owner = tenant ? params.add(scope.tenant!, tenant.type.sql) : null;
  const events = keyedEvents(resource, 'insert', params, owner);
  const conflict = [...(tenant ? [ident(tenant.name)] : []), ident(resource.imports!.key.name)].join(', ');
  const groups = byGivenFields(rows, resource.fields, resource.key[0]);
  const inserts = groups.map(({ fields, rows: given }, i) => {
    const columns = [...(tenant ? [ident(tenant.name)] : []), ...fields.map((f) => ident(f.name))];
    const values = [...(owner ? [owner] : []), ...fields.map((f) => `b.${ident(f.name)}`)];
    return (
      `inserted_${i} AS (INSERT INTO ${ident(resource.table)} AS t (${columns.join(', ')}) SELECT ${values.join(', ')}` +
      ` FROM json_to_recordset(${params.add(JSON.stringify(given), 'json')}) AS b(${recordType(fields)})` +
      ` ON CONFLICT (${conflict}) DO NOTHING RETURNING t.${key}, true AS "__inserted"${events.returning})`
    );
  });
  const written = groups.map((_, i) => `SELECT * FROM inserted_${i}`).join(' UNION ALL ');
  return statement(
    `WITH ${inserts.join(', ')}, written AS (${written})${events.cte} SELECT w.${key}::text AS key FROM written w`,
    params,
  );
}

/** Matched rows, by key: only the fields each row gives change. */
export function updateRows(resource: Resource, rows: readonly Row[], scope: ImportScope): CompiledStatement {
  const [key] = resource.key;
  const given = new Set(rows.flatMap((row) => Object.keys(row)));
  const fields = resource.fields.filter((f) => f !== key && given.has(f.name));
  const params = new Params();
  // Rows locked in key order, so two batches updating the same records cannot deadlock.
  const data = rows
    .map((row): Row => ({ ...row, __keys: Object.keys(row) }))
    .sort((x, y) => (String(x[key!.name]) < String(y[key!.name]) ? -1 : 1));
  const sets = givenSets(fields, params);
  if (resource.updatedAt) sets.push('"updated_at" = now()');
  if (sets.length === 0) sets.push(`${ident(key!.name)} = t.${ident(key!.name)}`);
  const source = ` FROM json_to_recordset(${params.add(JSON.stringify(data), 'json')})`;
  const tenant = resource.tenant && scope.tenancy && scope.tenant !== null ? resource.tenant : null;
  const owner = tenant ? params.add(scope.tenant!, tenant.type.sql) : null;
  const events = keyedEvents(resource, 'update', params, owner);
  return statement(
    `WITH written AS (UPDATE ${ident(resource.table)} AS t SET ${sets.join(', ')}${source}` +
      ` AS b(${recordType([key!, ...fields])}, "__keys" text[])` +
      ` WHERE t.${ident(key!.name)} = b.${ident(key!.name)}${owner ? ` AND t.${ident(tenant!.name)} = ${owner}` : ''}` +
      ` RETURNING t.${ident(key!.name)}${events.returning})${events.cte} SELECT count(*)::int4 AS updated FROM written`,
    params,
  );
}

export interface CustomValue {
  /** The record's key, as text. */
  readonly parent: string;
  readonly field: CustomField;
  readonly value: unknown;
}

/** Custom-field values into the resource's value table, replacing those already stored. */
export function writeCustomValues(
  resource: Resource,
  custom: CustomFields,
  values: readonly CustomValue[],
  scope: ImportScope,
): CompiledStatement {
  const params = new Params();
  const rows = values.map(({ parent, field, value }) => ({
    parent,
    field_id: field.id,
    key: field.key,
    type: field.type,
    value,
  }));
  const tenantColumn =
    custom.tenant && scope.tenancy && scope.tenant !== null
      ? `${params.add(scope.tenant, scope.tenancy.type.sql)} AS tenant, `
      : '';
  const parentType = resource.key[0]!.type.sql;
  const source =
    `(SELECT ${tenantColumn}r.* FROM json_to_recordset(${params.add(JSON.stringify(rows), 'json')})` +
    ` AS r(parent ${parentType}, field_id uuid, key text, type text, value jsonb)) c`;
  return statement(upsertCustomValues(custom, source), params);
}
