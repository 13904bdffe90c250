/**
 * Nested inserts in the insert's statement (plan/nested.ts): a reference resolves to the foreign key
 * of the record it names, inside the caller's tenant, and fails the statement when there is none;
 * children are inserted by data-modifying CTEs after the items, each pointing at its new record.
 * Foreign keys are checked at the end of the statement, so a child may point at a record the same
 * statement creates.
 */
import type { PlannedChildren } from '../plan/nested.ts';
import type { InsertPlan } from '../plan/types.ts';
import type { Field } from '../registry/index.ts';
import { eventsCte } from './events.ts';
import { ident, type Params, recordType } from './sql.ts';

/** The items' reference columns, for the recordset's column list. */
export const referenceColumns = (plan: InsertPlan): string[] =>
  plan.nested.references.flatMap((r) => r.by.map((f, i) => `${ident(r.columns[i]!)} ${f.type.sql}`));

/** `t."organisation_id" = <scoped> AND ` on a tenanted resource. */
const inTenant = (tenant: Field | null, alias: string, scoped: string) =>
  tenant ? `${alias}.${ident(tenant.name)} = ${scoped} AND ` : '';

/**
 * What the item's `field` gets when references set it: the key of the record the item names (by
 * whichever set of fields it uses), or its own value when it names none. A named record that does
 * not exist aborts the statement.
 */
export function referenceValue(plan: InsertPlan, field: Field, params: Params, scoped: string): string | null {
  const references = plan.nested.references.filter((r) => r.relation.parentFields.includes(field.name));
  if (references.length === 0) return null;
  const cases = references.map(({ relation, by, columns }) => {
    const { target } = relation;
    const targetField = relation.targetFields[relation.parentFields.indexOf(field.name)]!;
    const match = by.map((f, i) => `r.${ident(f.name)} = b.${ident(columns[i]!)}`).join(' AND ');
    const found =
      `(SELECT r.${ident(targetField)} FROM ${ident(target.table)} r` +
      ` WHERE ${inTenant(target.tenant, 'r', scoped)}${match})`;
    const type = target.field(targetField)!.type.sql;
    const missing = `CASE WHEN engage_fail('REFERENCE_NOT_FOUND', ${params.add(relation.name, 'text')}) THEN NULL::${type} END`;
    return ` WHEN b.${ident(columns[0]!)} IS NOT NULL THEN coalesce(${found}, ${missing})`;
  });
  return `CASE${cases.join('')} ELSE b.${ident(field.name)} END`;
}

/** One children CTE, `name`: the rows of records the insert's items create, whose parent was written. */
function childrenCte(children: PlannedChildren, name: string, params: Params, scoped: string): string {
  const { relation, fields } = children;
  const { target } = relation;
  const own = target.tenant ? [ident(target.tenant.name)] : [];
  const names = [...own, ...fields.map((f) => ident(f.name))];
  const values = [...own.map(() => scoped), ...fields.map((f) => `b.${ident(f.name)}`)];
  const parent = relation.parentFields.map((p, i) => `w.${ident(p)} = b.${ident(relation.targetFields[i]!)}`);
  return (
    `${name} AS (INSERT INTO ${ident(target.table)} AS t (${names.join(', ')}) SELECT ${values.join(', ')}` +
    ` FROM json_to_recordset(${params.add(children.rows, 'json')}) AS b(${recordType(fields)})` +
    ` WHERE EXISTS (SELECT FROM written w WHERE ${parent.join(' AND ')}) RETURNING t.*, true AS "__inserted")`
  );
}

/** `, children_0 AS (...), ...`: the children of every relation the items create records of, with their events. */
export function childrenCtes(plan: InsertPlan, params: Params, scoped: string): string {
  return plan.nested.children
    .map((children, i) => {
      const name = `children_${i}`;
      const events = eventsCte(children.relation.target, 'insert', params, scoped, name);
      return `, ${childrenCte(children, name, params, scoped)}${events}`;
    })
    .join('');
}
