/** How an embedded level's rows are found from their parent's: the relation's fields, inside the organisation. */
import type { Relation } from '../registry.ts';
import { ident } from './sql.ts';

/**
 * `a.organisation_id = <scoped> AND a.<target field> = parent.<parent field>`: the target's rows
 * (aliased `alias`) related to the parent's row, never outside the caller's organisation, even
 * through a reference that names another organisation's row.
 */
export const related = (relation: Relation, alias: string, parent: string, scoped: string): string =>
  `${alias}."organisation_id" = ${scoped}` +
  ` AND ${alias}.${ident(relation.targetField)} = ${parent}.${ident(relation.parentField)}`;
