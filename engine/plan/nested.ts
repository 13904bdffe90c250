/**
 * Nested inserts: a POST item may name, by a relation's name, the record a to-one relation points at
 * (`"contact": {"external_id": "crm-1"}`, by its key or another unique set of its fields) instead of
 * giving the foreign key, and the records of a to-many relation to create with it
 * (`"contact_note": [{"text": "..."}]`), whose foreign key then comes from the new record. The
 * statement resolves references and inserts children with the item (compile/write.ts), so all of
 * it happens or none.
 */
import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import type { Row } from '../db/port.ts';
import { ApiError, type Problem } from '../errors.ts';
import { KINDS } from '../field-kinds.ts';
import type { Field, Relation, Resource } from '../registry/index.ts';
import { type BodySchemas, inspectItem, isObject } from './body.ts';

/** A to-one relation an item names its record of: resolved to the foreign key in the statement. */
export interface PlannedReference {
  readonly relation: Relation;
  /** The target's fields an item names the record by: its key, or another unique set. */
  readonly by: readonly Field[];
  /** The column of the body's rows holding each `by` value. */
  readonly columns: readonly string[];
}

/** Records of a to-many relation created with the items, each keyed to its parent by the foreign key. */
export interface PlannedChildren {
  readonly relation: Relation;
  /** The child's fields the rows give, its foreign key first. */
  readonly fields: readonly Field[];
  /** The rows, as a JSON array's text. */
  readonly rows: string;
}

export interface Nested {
  readonly references: readonly PlannedReference[];
  readonly children: readonly PlannedChildren[];
}

const fieldsOf = (resource: Resource, names: readonly string[]) => names.map((n) => resource.field(n)!);

/**
 * Takes the nested parts out of the items (which then hold fields only, and the reference columns
 * `__ref_<n>_<i>`), checking them; `problems` gets what is wrong, by item. Items that create
 * children are given their key first, when the database would generate it (a uuid).
 */
export function takeNested(
  resource: Resource,
  items: readonly unknown[],
  schemasOf: (resource: Resource) => BodySchemas,
  problems: Problem[],
): { items: unknown[]; references: Row[]; nested: Nested; claimed: string[] } {
  const relations = new Map(resource.relations.map((r) => [r.name, r]));
  const references = new Map<string, PlannedReference>();
  const children = new Map<Relation, Row[]>();
  const refValues: Row[] = items.map(() => ({}));
  const claimed = new Set<string>();
  const stripped = items.map((item, index) => {
    if (!isObject(item)) return item;
    // Entries, not assignments: a key such as __proto__ stays a key (an unknown field).
    const rest: Array<[string, unknown]> = [];
    for (const [key, value] of Object.entries(item)) {
      const relation = relations.get(key);
      if (!relation || resource.field(key)) {
        rest.push([key, value]);
        continue;
      }
      const problem = (message: string) => problems.push({ item: index, field: key, message });
      if (relation.cardinality === 'one' && relation.via === 'parent') {
        if (relation.parentFields.some((f) => f in item)) {
          problem(`names the record ${relation.parentFields.join(', ')} already names; give one of them`);
          continue;
        }
        const named = referenceBy(relation, value);
        if (typeof named === 'string') {
          problem(named);
          continue;
        }
        // One set of columns per relation and set of fields items name its records by.
        const by = `${relation.name}(${named.map((f) => f.name).join(',')})`;
        const planned = references.get(by) ?? {
          relation,
          by: named,
          columns: named.map((_, i) => `__ref_${references.size}_${i}`),
        };
        references.set(by, planned);
        const { columns } = planned;
        named.forEach((f, i) => {
          refValues[index]![columns[i]!] = (value as Row)[f.name];
        });
      } else if (relation.cardinality === 'many' && relation.via === 'target') {
        const created = childRows(resource, relation, item, value, index, schemasOf, problems);
        if (created) children.set(relation, [...(children.get(relation) ?? []), ...created.rows]);
        if (created?.key) rest.push(...Object.entries(created.key));
        for (const tenant of created?.claimed ?? []) claimed.add(tenant);
      } else {
        problem(`is a relation a record is not created with; create its records with their own POST`);
      }
    }
    return Object.fromEntries(rest);
  });
  return {
    items: stripped,
    references: refValues,
    claimed: [...claimed],
    nested: {
      references: [...references.values()],
      children: [...children].map(([relation, rows]) => {
        const given = new Set(rows.flatMap((row) => Object.keys(row)));
        const fields = [
          ...fieldsOf(relation.target, relation.targetFields),
          ...relation.target.fields.filter((f) => given.has(f.name) && !relation.targetFields.includes(f.name)),
        ];
        return { relation, fields, rows: JSON.stringify(rows) };
      }),
    },
  };
}

/** Why `value` cannot name a record by `field` (a key or unique field), or null when it can. */
export function namingProblem(field: Field, value: unknown): string | null {
  if (value === undefined || value === null) return 'is required: it names the record';
  const kind = KINDS[field.kind];
  // A key is matched as a filter value is: a number by its text. Another JSON value gets the body's message.
  if (typeof value !== 'string' && typeof value !== 'number') {
    const checked = v.safeParse(kind.body(field.type), value);
    return checked.success ? `must be ${kind.described}` : checked.issues[0].message;
  }
  return kind.filter(String(value), field.type) ? null : `must be ${kind.described}`;
}

/** The target fields a reference names its record by, or what is wrong with it. */
function referenceBy(relation: Relation, value: unknown): Field[] | string {
  const { target } = relation;
  const sets = target.uniques.map((u) => u.map((f) => f.name).join(', '));
  const wanted = `must be an object naming one ${target.name} by ${sets.map((s) => `{${s}}`).join(' or ')}`;
  if (!isObject(value)) return wanted;
  const keys = Object.keys(value);
  const unique = target.uniques.find((u) => u.length === keys.length && u.every((f) => keys.includes(f.name)));
  if (!unique) return wanted;
  for (const f of unique) {
    const problem = namingProblem(f, value[f.name]);
    if (problem) return `${f.name} ${problem}`;
  }
  return [...unique];
}

/** The child rows of one item, each with its foreign key set to the item's key (given one if need be). */
function childRows(
  resource: Resource,
  relation: Relation,
  item: Row,
  value: unknown,
  index: number,
  schemasOf: (resource: Resource) => BodySchemas,
  problems: Problem[],
): { rows: Row[]; key: Row | null; claimed: string[] } | null {
  const { target } = relation;
  const problem = (field: string, message: string) => problems.push({ item: index, field, message });
  if (!target.verbs.has('POST')) {
    problem(relation.name, `cannot be created here: ${target.name} does not offer POST`);
    return null;
  }
  if (!Array.isArray(value)) {
    problem(relation.name, `must be an array of ${target.name} records to create`);
    return null;
  }
  // The new record's key, which its children point at: given, or made here when it is a uuid.
  let key: Row | null = null;
  const parentKey = fieldsOf(resource, relation.parentFields);
  if (parentKey.some((f) => item[f.name] === undefined)) {
    if (parentKey.length !== 1 || parentKey[0]!.kind !== 'uuid') {
      problem(relation.name, `needs the record's ${relation.parentFields.join(', ')} given, to point its children at`);
      return null;
    }
    key = { [parentKey[0]!.name]: randomUUID() };
  }
  const keyValues = parentKey.map((f) => (key ?? item)[f.name]);
  const schemas = schemasOf(target);
  const claimed: string[] = [];
  const rows = value.map((child, j) => {
    const at = `${relation.name}.${j}`;
    if (isObject(child)) {
      for (const fk of relation.targetFields) {
        if (fk in child) problem(`${at}.${fk}`, `is set from the record ${target.name} is created with`);
      }
    }
    const inspected = inspectItem(target, schemas, child, 'create');
    if (inspected.claimed) claimed.push(inspected.claimed);
    for (const p of [...inspected.unknown, ...inspected.invalid]) problem(p.field ? `${at}.${p.field}` : at, p.message);
    const row: Row = { ...inspected.row };
    relation.targetFields.forEach((fk, i) => {
      row[fk] = keyValues[i];
    });
    return row;
  });
  return { rows, key, claimed };
}

/** Refuses nested parts where they cannot go: an upsert decides per row whether anything is created. */
export function checkNested(nested: Nested, upsert: boolean): void {
  if (upsert && nested.children.length > 0) {
    throw new ApiError('VALIDATION_FAILED', 'records cannot be created with an upsert (Prefer: resolution=...)', {
      hint: `Create the ${nested.children.map((c) => c.relation.name).join(', ')} records with their own POST.`,
    });
  }
}
