/** Which relation an embed names: by resource, foreign key or referencing field, narrowed by `!hint`. */
import { ApiError } from '../errors.ts';
import type { Relation, Resource } from '../registry/index.ts';

/** PostgREST's name of each way a relation goes. */
const CARDINALITY: Readonly<Record<string, string>> = {
  'parent-one': 'many-to-one',
  'target-many': 'one-to-many',
  'target-one': 'one-to-one',
  junction: 'many-to-many',
};

/** How a relation is listed in hints: `contact (to one, deal_contact_fkey)`. */
const describe = (r: Relation) => `${r.name} (to ${r.cardinality}, ${r.foreignKey})`;

export function relationsHint(resource: Resource): string {
  return resource.relations.length
    ? `Relations of ${resource.name}: ${resource.relations.map(describe).join(', ')}.`
    : `${resource.name} has no relations to embed.`;
}

/**
 * The relation of `resource` that `name` (and `hint`, when given) picks out. As PostgREST does, a
 * relation is named by the resource it leads to, by its foreign key, or (to one) by the field
 * holding the reference; a hint is a foreign key's name or field.
 */
export function findRelation(resource: Resource, name: string, hint: string | null): Relation {
  // A junction's name only hints (`member!membership`): by itself it names the junction's own resource.
  const column = (r: Relation) => (r.columns.length === 1 ? r.columns[0] : undefined);
  const named = resource.relations.filter(
    (r) =>
      r.name === name ||
      (r.junction === null && r.foreignKeyNames.includes(name)) ||
      (r.cardinality === 'one' && column(r) === name),
  );
  const found = hint === null ? named : named.filter((r) => r.foreignKeyNames.includes(hint) || column(r) === hint);
  const shown = hint === null ? name : `${name}!${hint}`;
  if (found.length === 0) {
    throw new ApiError('UNKNOWN_RELATION', `${resource.name} has no relation "${shown}" to embed`, {
      hint: relationsHint(resource),
      context: { resource: resource.name, relation: name, ...(hint === null ? {} : { hint }) },
    });
  }
  // A table that refers to itself: its own name embeds the rows pointing at each row, as in
  // PostgREST (`mentees:author(name)`); its foreign key's field embeds the row it points at.
  const children = found.filter((r) => r.target === resource && r.via === 'target');
  if (found.length > 1 && hint === null && name === resource.name && children.length === 1) return children[0]!;
  if (found.length > 1) {
    // A resource's name picks one out when the relations lead to different resources (two
    // resources over one table share their foreign keys); the foreign key does otherwise.
    const forms = found.map((r) =>
      found.filter((other) => other.name === r.name).length === 1 ? r.name : `${r.name}!${r.foreignKey}`,
    );
    throw new ApiError('AMBIGUOUS_RELATION', `"${shown}" could mean ${found.length} relations of ${resource.name}`, {
      hint: `Say which: ${forms.join(', ')}.`,
      // PostgREST's candidates (PGRST201), as its clients read them.
      details: found.map((r) => ({
        cardinality: CARDINALITY[r.via === 'junction' ? 'junction' : `${r.via}-${r.cardinality}`],
        embedding: `${resource.name} with ${r.target.name}`,
        relationship:
          `${r.foreignKey} using ${resource.table}(${r.parentFields.join(', ')})` +
          ` and ${r.target.table}(${r.targetFields.join(', ')})`,
      })),
      context: { resource: resource.name, relation: name, candidates: found.map((r) => r.foreignKey) },
    });
  }
  return found[0]!;
}

/** 400 for parameters prefixed by `path` (`deal.contact`), which the select does not embed. */
export function notEmbedded(path: string): ApiError {
  const names = path.split('.');
  // `deal.contact` -> `deal(contact(...))`
  const nested = `${names.join('(')}(...)${')'.repeat(names.length - 1)}`;
  return new ApiError('NOT_EMBEDDED', `"${path}" is not an embedded resource in this request`, {
    hint: `Embed it in select (${nested}), or remove the ${path}.* parameters.`,
    context: { embed: path },
  });
}
