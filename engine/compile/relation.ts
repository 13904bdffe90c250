/** How an embedded level's rows are found from their parent's: the relation's fields, inside the tenant. */
import type { Relation } from '../registry/index.ts';
import { ident } from './sql.ts';

/** `a."x"`, or `(a."x", a."y")` for several fields. */
const tuple = (alias: string, fields: readonly string[]) => {
  const list = fields.map((f) => `${alias}.${ident(f)}`).join(', ');
  return fields.length === 1 ? list : `(${list})`;
};

/**
 * The target's rows (aliased `alias`) related to the parent's row (aliased `parent`, tenanted or
 * not): `a.<target fields> = parent.<parent fields>`, or through the junction table, and never
 * outside the caller's tenant, even through a reference that names another tenant's row. Between
 * two tenanted tables the join on the tenant column says nothing new to PostgreSQL; it lets Citus
 * join the tables shard by shard (docs/scaling.md).
 */
export function related(relation: Relation, alias: string, parent: string, parentTenanted: boolean, scoped: string) {
  const tenant = relation.target.tenant && ident(relation.target.tenant.name);
  const parts: string[] = [];
  if (tenant) {
    parts.push(`${alias}.${tenant} = ${scoped}`);
    if (parentTenanted) parts.push(`${alias}.${tenant} = ${parent}.${tenant}`);
  }
  const { junction } = relation;
  if (junction === null) {
    parts.push(
      ...relation.targetFields.map((f, i) => `${alias}.${ident(f)} = ${parent}.${ident(relation.parentFields[i]!)}`),
    );
    return parts.join(' AND ');
  }
  // Many to many: the target rows the junction's rows of the parent name, in the tenant too.
  const j = `${alias}_j`;
  const through: string[] = [];
  if (junction.tenant) {
    const column = ident(junction.tenant);
    through.push(`${j}.${column} = ${scoped}`);
    if (tenant) through.push(`${j}.${column} = ${alias}.${tenant}`);
  }
  through.push(
    ...junction.parentFields.map((f, i) => `${j}.${ident(f)} = ${parent}.${ident(relation.parentFields[i]!)}`),
  );
  parts.push(
    `${tuple(alias, relation.targetFields)} IN (SELECT ${junction.targetFields.map((f) => `${j}.${ident(f)}`).join(', ')}` +
      ` FROM ${ident(junction.table)} ${j} WHERE ${through.join(' AND ')})`,
  );
  return parts.join(' AND ');
}
