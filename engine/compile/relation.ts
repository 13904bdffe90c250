/** How an embedded level's rows are found from their parent's: the relation's fields, inside the organisation. */
import type { Relation } from '../registry.ts';
import { ident } from './sql.ts';

/**
 * `a.organisation_id = <scoped> AND a.<target field> = parent.<parent field>` (or through the
 * junction table): the target's rows (aliased `alias`) related to the parent's row, never outside
 * the caller's organisation, even through a reference that names another organisation's row. The
 * join on organisation_id says nothing new to PostgreSQL; it lets Citus join the tables shard by
 * shard (docs/scaling.md).
 */
export function related(relation: Relation, alias: string, parent: string, scoped: string): string {
  const own = `${alias}."organisation_id" = ${scoped} AND ${alias}."organisation_id" = ${parent}."organisation_id"`;
  const { junction } = relation;
  if (junction === null) {
    return `${own} AND ${alias}.${ident(relation.targetField)} = ${parent}.${ident(relation.parentField)}`;
  }
  // Many to many: the target rows the junction's rows of the parent name, in the organisation too.
  const j = `${alias}_j`;
  return (
    `${own} AND ${alias}."id" IN (SELECT ${j}.${ident(junction.targetField)} FROM ${ident(junction.table)} ${j}` +
    ` WHERE ${j}."organisation_id" = ${scoped} AND ${j}."organisation_id" = ${alias}."organisation_id"` +
    ` AND ${j}.${ident(junction.parentField)} = ${parent}."id")`
  );
}
