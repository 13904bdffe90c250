/**
 * References and relations, from foreign keys. A foreign key between two tenanted tables is a
 * reference when it pairs their tenant columns (it leads with them, by convention), so the
 * database itself keeps it inside a tenant; a foreign key from or to a shared table, or any in a
 * single-tenant registry, is a reference as it is. A foreign key of a tenanted table that names
 * the tenant column otherwise (the tenant's own row, `organisation_id -> organisation.id`) or
 * that leaves it out between tenanted tables is not one.
 */
import type { Junction, Reference, Relation, Resource, ResourceDefinition } from './index.ts';
import type { ForeignKeyShape, TableShape } from './table.ts';

/** Pairs of `[column, target column]` of a foreign key that the engine follows, tenant columns left out. */
function pairsOf(fk: ForeignKeyShape, tenant: string | null, tenanted: boolean, targetTenanted: boolean) {
  const pairs = fk.columns.map((column, i) => [column, fk.targetColumns[i]!] as const);
  if (tenant === null || !tenanted) {
    return targetTenanted && tenant !== null && pairs.some(([, to]) => to === tenant) ? null : pairs;
  }
  const own = pairs.filter(([from]) => from === tenant);
  if (own.length === 0) return targetTenanted ? null : pairs;
  // Both sides tenanted, paired on the tenant column: the rest is the reference.
  if (own.length !== 1 || own[0]![1] !== tenant || !targetTenanted) return null;
  return pairs.filter(([from]) => from !== tenant);
}

/**
 * The references of a table: `tenanted` whether its rows have a tenant, `isTenanted` whether the
 * table a foreign key names has. A reference is unique (one to one) when its fields are all of a
 * unique constraint besides the tenant column.
 */
export function referencesOf(
  shape: TableShape,
  tenant: string | null,
  tenanted: boolean,
  isTenanted: (table: ForeignKeyShape['table']) => { name: string; tenanted: boolean },
): Reference[] {
  const uniques = shape.uniques.map((columns) => columns.filter((c) => c !== tenant));
  return shape.foreignKeys.flatMap((fk) => {
    const target = isTenanted(fk.table);
    const pairs = pairsOf(fk, tenant, tenanted, target.tenanted);
    if (!pairs || pairs.length === 0) return [];
    const fields = pairs.map(([from]) => from);
    const unique = uniques.some((u) => u.length === fields.length && u.every((c) => fields.includes(c)));
    return [
      {
        name: fk.name,
        names: [...new Set([fk.name, fk.defaultName])],
        fields,
        table: target.name,
        targetFields: pairs.map(([, to]) => to),
        targetTenanted: target.tenanted,
        unique,
      },
    ];
  });
}

const covers = (key: readonly string[], fields: readonly string[]) => fields.every((f) => key.includes(f));

/**
 * Every relation of `resource`: each reference of its table to a readable resource's table (to
 * one), each reference of a readable resource's table to its table (to many, or to one when
 * unique), and each junction table relating the two (many to many): a table whose primary key
 * holds all the fields of two of its references.
 */
export function relationsOf(resource: Resource, def: ResourceDefinition, resources: readonly Resource[]): Relation[] {
  const readable = resources.filter((r) => r.verbs.has('GET'));
  // Several resources may share a table (a `*_details` view): each table once.
  const tables = [...new Map(resources.map((r) => [r.table, r])).values()];
  const relations: Relation[] = [];
  const add = (target: Resource, relation: Omit<Relation, 'name' | 'target'>) =>
    relations.push({ name: target.name, target, ...relation });
  for (const target of readable) {
    for (const ref of resource.references) {
      if (ref.table !== target.table) continue;
      add(target, {
        foreignKey: ref.name,
        foreignKeyNames: ref.names,
        columns: ref.fields,
        cardinality: 'one',
        via: 'parent',
        parentFields: ref.fields,
        targetFields: ref.targetFields,
        junction: null,
      });
    }
    for (const ref of target.references) {
      if (ref.table !== resource.table) continue;
      add(target, {
        foreignKey: ref.name,
        foreignKeyNames: ref.names,
        columns: ref.fields,
        cardinality: ref.unique ? 'one' : 'many',
        via: 'target',
        parentFields: ref.targetFields,
        targetFields: ref.fields,
        junction: null,
      });
    }
    for (const table of tables) {
      const key = table.key.map((f) => f.name);
      for (const from of table.references) {
        for (const to of table.references) {
          const keyed = covers(key, from.fields) && covers(key, to.fields);
          if (from === to || !keyed || from.table !== resource.table || to.table !== target.table) continue;
          const junction: Junction = {
            table: table.table,
            tenant: table.tenant?.name ?? null,
            parentFields: from.fields,
            targetFields: to.fields,
          };
          add(target, {
            foreignKey: table.table,
            foreignKeyNames: [table.table],
            columns: [],
            cardinality: 'many',
            via: 'junction',
            parentFields: from.targetFields,
            targetFields: to.targetFields,
            junction,
          });
        }
      }
    }
  }
  const keys = new Set(relations.flatMap((r) => r.foreignKeyNames));
  for (const name of Object.keys(def.relations ?? {})) {
    if (!keys.has(name)) {
      throw new Error(
        `registry: ${def.name}.relations names '${name}', which is no relation of it;` +
          ` its relations are by foreign key: ${[...keys].join(', ') || 'none'}`,
      );
    }
  }
  return relations.flatMap((relation) => {
    const given = relation.foreignKeyNames.filter((n) => def.relations?.[n] !== undefined);
    const renamed = given.length ? def.relations![given[0]!] : undefined;
    if (renamed === false) return [];
    return [renamed === undefined ? relation : { ...relation, name: renamed }];
  });
}
