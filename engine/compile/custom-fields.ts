/**
 * Custom-field values in SQL, derived from the type table in custom-fields.ts: reading a stored
 * value from its typed column, checking a JSON value against a field's type inside a statement,
 * and writing values into a value table (PATCH on `*_details` and imports share that statement).
 */

import { CUSTOM_FIELD_TYPES, type CustomFieldType } from '../custom-fields.ts';
import { kindType } from '../field-kinds.ts';
import { arrayLiteral } from '../plan/values.ts';
import type { CustomFields, Resource } from '../registry/index.ts';
import { constant, ident, type Params } from './sql.ts';

const TYPES = Object.keys(CUSTOM_FIELD_TYPES) as CustomFieldType[];

/** `CASE <type> WHEN 'string' THEN <then('string')> ... END` over every custom-field type. */
const byType = (type: string, then: (t: CustomFieldType) => string, otherwise = '') =>
  `CASE ${type}${TYPES.map((t) => ` WHEN ${constant(t)} THEN ${then(t)}`).join('')}${otherwise} END`;

/** A stored value as JSON, read from the typed column of value row `v` that its field's type names. */
const STORED_VALUE = byType('cf."type"', (t) => `to_jsonb(v.${ident(CUSTOM_FIELD_TYPES[t].column)})`);

/**
 * A typed value as PostgreSQL prints it (`t`, `{a,b}`, `2026-12-01 09:00:00+00`), as CSV shows
 * columns (compile/csv.ts); NULL stays NULL. `concat` prints with the type's output function.
 */
const printed = (value: string) => `CASE WHEN ${value} IS NOT NULL THEN concat(${value}) END`;

/** A stored value as text, as `printed` gives it. */
const STORED_TEXT = byType('cf."type"', (t) => printed(`v.${ident(CUSTOM_FIELD_TYPES[t].column)}`));

/** Where the stored values are read: the record's alias, the tenant's SQL, and whether as text. */
export interface StoredOptions {
  readonly table?: string;
  readonly scoped: string;
  /** Each value as the text of its typed column (for CSV) rather than JSON. */
  readonly text?: boolean;
}

/**
 * The stored custom-field values of row `table` of `resource` as one jsonb object, or NULL when it
 * has none. `keys` are the object's other keys: a custom field never hides or repeats one of them.
 */
export function storedCustomFields(
  resource: Resource,
  keys: readonly string[],
  params: Params,
  { table = 't', scoped, text = false }: StoredOptions,
): string {
  const custom = resource.customFields!;
  const reserved = params.add(arrayLiteral(keys), 'text[]');
  const entity = params.add(custom.entity, 'text');
  const tenant = custom.tenant && ident(custom.tenant);
  return (
    `(SELECT jsonb_object_agg(cf."key", ${text ? STORED_TEXT : STORED_VALUE}) FROM ${ident(custom.table)} v` +
    ` JOIN ${ident(custom.definitions)} cf ON ${tenant ? `cf.${tenant} = v.${tenant} AND ` : ''}` +
    `cf."id" = v."custom_field_id" AND cf."entity" = ${entity}` +
    ` WHERE ${tenant ? `v.${tenant} = ${scoped} AND ` : ''}` +
    `v.${ident(custom.parentKey)} = ${table}.${ident(resource.key[0]!.name)} AND cf."key" <> ALL(${reserved}))`
  );
}

/**
 * Whether the jsonb `value` fits a field of type `type` (both SQL expressions); null always fits
 * (it clears the value). The same rules as `customValueProblem`, with its very patterns as
 * parameters, so a value is judged alike in TypeScript and in SQL.
 */
export function customValueFits(value: string, type: string, params: Params): string {
  const text = `(${value} #>> '{}')`;
  const fits = (t: CustomFieldType) => {
    const spec = CUSTOM_FIELD_TYPES[t];
    const checks = [`jsonb_typeof(${value}) = ${constant(spec.json)}`];
    if (spec.json === 'array') {
      checks.push(`NOT EXISTS (SELECT 1 FROM jsonb_array_elements(${value}) e WHERE jsonb_typeof(e) <> 'string')`);
    }
    if ('pattern' in spec) {
      checks.push(`${text} ~* ${params.add(spec.pattern.source, 'text')}`);
      checks.push(`engage_parses(${text}, ${constant(kindType(spec.kind).sql)})`);
    }
    return checks.join(' AND ');
  };
  return `(jsonb_typeof(${value}) = 'null' OR ${byType(type, fits, ' ELSE false')})`;
}

/** The jsonb `value` as the typed column of type `t` holds it. */
function typedValue(t: CustomFieldType, value: string): string {
  const spec = CUSTOM_FIELD_TYPES[t];
  if (spec.json === 'array') return `ARRAY(SELECT jsonb_array_elements_text(${value}))`;
  const text = `(${value} #>> '{}')`;
  return spec.kind === 'text' ? text : `${text}::${kindType(spec.kind).sql}`;
}

/** The jsonb `value` of a field of type `type` (both SQL expressions) as `printed` gives its typed column. */
export const customValueText = (value: string, type: string): string =>
  `CASE WHEN jsonb_typeof(${value}) <> 'null' THEN ${byType(type, (t) => printed(typedValue(t, value)))} END`;

/**
 * Writes custom-field values: `source` is a FROM item aliased `c` with columns `tenant` (in a
 * tenanted registry), `parent` (the record's key), `field_id`, `key`, `type` and `value` (jsonb,
 * fitting its type). Each value lands in its typed column and as text in `value`; a value already
 * stored is replaced.
 */
export function upsertCustomValues(custom: CustomFields, source: string): string {
  const tenant = custom.tenant ? [ident(custom.tenant)] : [];
  const key = [...tenant, ident(custom.parentKey), '"custom_field_id"'].join(', ');
  const typed = TYPES.map((t) => ident(CUSTOM_FIELD_TYPES[t].column));
  const values = TYPES.map((t) => `CASE WHEN c."type" = ${constant(t)} THEN ${typedValue(t, 'c."value"')} END`);
  const written = ['"key"', '"value"', ...typed];
  return (
    `INSERT INTO ${ident(custom.table)} (${key}, ${written.join(', ')})` +
    ` SELECT ${tenant.length ? 'c."tenant", ' : ''}c."parent", c."field_id", c."key", c."value" #>> '{}', ${values.join(', ')}` +
    ` FROM ${source} ON CONFLICT (${key}) DO UPDATE SET` +
    ` ${written.map((col) => `${col} = EXCLUDED.${col}`).join(', ')}, "updated_at" = now()`
  );
}
