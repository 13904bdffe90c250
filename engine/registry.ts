/**
 * The resource registry: what the API serves, read once at start-up. A resource definition names
 * its drizzle table and says which verbs it offers, which fields may be filtered and ordered and
 * which are managed by the server. Field names, SQL types, enums, nullability, keys and references
 * are derived from the table, so the registry cannot disagree with the database.
 */
import { SQL } from 'drizzle-orm';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';

export const VERBS = ['GET', 'POST', 'PATCH', 'DELETE'] as const;
export type Verb = (typeof VERBS)[number];

/** The value kinds the engine knows how to filter, validate and describe. */
export const FIELD_KINDS = [
  'uuid',
  'text',
  'boolean',
  'integer',
  'numeric',
  'date',
  'timestamptz',
  'text[]',
  'jsonb',
] as const;
export type FieldKind = (typeof FIELD_KINDS)[number];

const KIND_BY_SQL_TYPE: Readonly<Record<string, FieldKind>> = {
  uuid: 'uuid',
  text: 'text',
  boolean: 'boolean',
  integer: 'integer',
  numeric: 'numeric',
  date: 'date',
  'timestamp with time zone': 'timestamptz',
  'text[]': 'text[]',
  jsonb: 'jsonb',
};

export interface Field {
  readonly name: string;
  readonly kind: FieldKind;
  readonly enum: readonly string[] | undefined;
  readonly nullable: boolean;
  /** The column's default when it is a plain value (false, 0, 'virtual'), for `Prefer: missing=default`. */
  readonly defaultValue: unknown;
  readonly filterable: boolean;
  /** An allowed order field, or a field of the table's key (clients sort by the key by default). */
  readonly orderable: boolean;
  /**
   * Set by the server: a body's value is ignored, except that `id` may be given on create and
   * `organisation_id` must name the caller's own organisation.
   */
  readonly serverManaged: boolean;
  /** Part of an index or unique constraint, which bounds how long its values may be. */
  readonly indexed: boolean;
  readonly description: string | undefined;
}

/** Custom-field values kept in a value table shaped like `appointment_custom_field`. */
export interface CustomFieldsDefinition {
  /** The `custom_field.entity` whose fields these are. */
  readonly entity: string;
  /** The value table. */
  readonly values: PgTable;
  /** Its column that points at the record's `id`. */
  readonly parentKey: string;
  /** The table of custom-field definitions (`custom_field`): key, type and entity of each field. */
  readonly definitions: PgTable;
}

export interface CustomFields {
  readonly entity: string;
  /** The value table. */
  readonly table: string;
  readonly parentKey: string;
  /** The table of custom-field definitions. */
  readonly definitions: string;
}

/**
 * A rule a body value must follow beyond its type, checked on create and update alike: for
 * example, only virtual calendars may be created. `allows` sees the value the body gives.
 */
export interface FieldRule {
  readonly field: string;
  readonly allows: (value: unknown) => boolean;
  readonly message: string;
}

export interface ResourceDefinition {
  readonly name: string;
  readonly table: PgTable;
  readonly description?: string;
  readonly verbs: readonly Verb[];
  /** Fields `order` may name besides the table's key; none when absent. */
  readonly orderable?: readonly string[];
  /** Fields filters may name; every field when absent. */
  readonly filterable?: readonly string[];
  /** Defaults to id, created_at, updated_at and organisation_id. */
  readonly serverManaged?: readonly string[];
  /** Custom-field values shown as extra properties named by `custom_field.key` (`*_details`). */
  readonly customFields?: CustomFieldsDefinition;
  readonly fieldDescriptions?: Readonly<Record<string, string>>;
  readonly rules?: readonly FieldRule[];
  /** Its name in the versioned API, `/v1/<collection>`, where its keyset pages and imports are. */
  readonly collection?: string;
  /** Keyset pages at `GET /v1/<collection>`, ordered by these non-null fields; the last must be unique. */
  readonly keyset?: readonly string[];
  /** Imports at `/v1/<collection>/imports`: items matched on `external_id`, with these custom fields. */
  readonly imports?: { readonly customFields?: CustomFieldsDefinition };
  /**
   * The relations embeds may follow are derived from foreign keys, named by the resource at the
   * other end. By foreign key name: `false` hides that relation of this resource, a string renames it.
   */
  readonly relations?: Readonly<Record<string, string | false>>;
  /** Whether `select` may aggregate (`count()`, `value.sum()`); true when absent. */
  readonly aggregates?: boolean;
}

/** A foreign key `(organisation_id, field) -> table (organisation_id, id)`: a reference inside the organisation. */
export interface Reference {
  /** The foreign key's name. */
  readonly name: string;
  readonly field: string;
  readonly table: string;
  /** Whether each record references a different row (`field` is unique in the organisation): one to one. */
  readonly unique: boolean;
}

/** A table whose key holds references to two tables: it relates their rows many to many. */
export interface Junction {
  readonly table: string;
  /** Its field referencing the parent's `id`, and its field referencing the target's. */
  readonly parentField: string;
  readonly targetField: string;
}

/**
 * A way from one resource to another that `select` can embed, from a foreign key read in either
 * direction: to one (deal -> its contact; or back, when the reference is unique) or to many
 * (contact -> its deals), or through a junction table, many to many. Rows are matched on
 * `target.targetField = parent.parentField` (or through the junction) inside the caller's organisation.
 */
export interface Relation {
  /** How `select` names it: the target resource's name unless the definition renames it. */
  readonly name: string;
  readonly target: Resource;
  /**
   * The foreign key's name (the junction table's, many to many), which tells apart two relations
   * to the same resource.
   */
  readonly foreignKey: string;
  /** The field holding the reference: on the parent for a to-one relation, on the target for a to-many. */
  readonly referencing: string;
  readonly cardinality: 'one' | 'many';
  readonly parentField: string;
  readonly targetField: string;
  readonly junction: Junction | null;
}

export interface Resource {
  readonly name: string;
  readonly table: string;
  readonly description: string | undefined;
  readonly verbs: ReadonlySet<Verb>;
  readonly fields: readonly Field[];
  /** The fields of the table's primary key besides organisation_id. */
  readonly key: readonly string[];
  readonly customFields: CustomFields | undefined;
  readonly rules: readonly FieldRule[];
  readonly references: readonly Reference[];
  readonly collection: string | undefined;
  readonly keyset: readonly Field[] | undefined;
  readonly imports: { readonly customFields: CustomFields | undefined } | undefined;
  /** What `select` can embed from this resource; only resources offering GET are embedded. */
  readonly relations: readonly Relation[];
  readonly aggregates: boolean;
  field(name: string): Field | undefined;
}

export interface Registry {
  readonly resources: readonly Resource[];
  get(name: string): Resource | undefined;
  /** The resource a versioned-API collection (`contacts`) names. */
  collection(name: string): Resource | undefined;
}

const DEFAULT_SERVER_MANAGED = ['id', 'created_at', 'updated_at', 'organisation_id'];

/**
 * Typed identity: lets a registry entry be written as a plain object literal.
 * @example
 * defineResource({ name: 'ticket', table: t.ticket, verbs: ['GET'], orderable: ['priority'] })
 */
export const defineResource = (definition: ResourceDefinition): ResourceDefinition => definition;

function customFieldsOf(owner: string, def: CustomFieldsDefinition): CustomFields {
  const values = getTableConfig(def.values);
  if (!values.columns.some((c) => c.name === def.parentKey)) {
    throw new Error(`registry: ${owner}: ${values.name} has no column ${def.parentKey}`);
  }
  return {
    entity: def.entity,
    table: values.name,
    parentKey: def.parentKey,
    definitions: getTableConfig(def.definitions).name,
  };
}

function buildResource(def: ResourceDefinition): Resource {
  const config = getTableConfig(def.table);
  const columns = new Map(config.columns.map((c) => [c.name, c]));
  const mustExist = (names: readonly string[] | undefined, what: string) => {
    for (const name of names ?? []) {
      if (!columns.has(name))
        throw new Error(`registry: ${def.name}.${what} names '${name}', which ${config.name} lacks`);
    }
  };
  mustExist(def.orderable, 'orderable');
  mustExist(def.filterable, 'filterable');
  mustExist(def.serverManaged, 'serverManaged');
  mustExist(def.keyset, 'keyset');
  mustExist(
    def.rules?.map((r) => r.field),
    'rules',
  );
  if (!columns.has('organisation_id')) throw new Error(`registry: ${config.name} has no organisation_id`);
  if ((def.keyset || def.imports) && !def.collection) {
    throw new Error(`registry: ${def.name} has keyset pages or imports, so it needs a collection name`);
  }

  const indexed = new Set(
    [...config.indexes.flatMap((i) => i.config.columns), ...config.uniqueConstraints.flatMap((u) => u.columns)].map(
      (c) => ('name' in c ? c.name : ''),
    ),
  );
  const key = new Set(config.primaryKeys.flatMap((k) => k.columns.map((c) => c.name)));
  key.delete('organisation_id');
  const orderable = new Set([...(def.orderable ?? []), ...key]);
  const filterable = def.filterable ? new Set(def.filterable) : null;
  const serverManaged = new Set(def.serverManaged ?? DEFAULT_SERVER_MANAGED);
  const fields: Field[] = config.columns.map((column) => {
    const kind = KIND_BY_SQL_TYPE[column.getSQLType()];
    if (!kind) throw new Error(`registry: ${config.name}.${column.name} has unsupported type ${column.getSQLType()}`);
    return {
      name: column.name,
      kind,
      enum: column.enumValues?.length ? column.enumValues : undefined,
      nullable: !column.notNull,
      defaultValue: column.default instanceof SQL ? undefined : column.default,
      filterable: filterable ? filterable.has(column.name) : true,
      orderable: orderable.has(column.name),
      serverManaged: serverManaged.has(column.name),
      indexed: indexed.has(column.name),
      description: def.fieldDescriptions?.[column.name],
    };
  });
  const byName = new Map(fields.map((f) => [f.name, f]));

  const keyset = def.keyset?.map((name) => byName.get(name)!);
  if (keyset?.some((f) => f.nullable)) throw new Error(`registry: ${def.name}.keyset names a nullable field`);

  // Foreign keys (organisation_id, x) -> other (organisation_id, id) are references inside the organisation.
  const uniques = [...config.uniqueConstraints.map((u) => u.columns), ...config.primaryKeys.map((k) => k.columns)].map(
    (columns) => new Set(columns.map((c) => c.name).filter((name) => name !== 'organisation_id')),
  );
  const references = config.foreignKeys.flatMap((fk) => {
    const ref = fk.reference();
    const [org, column] = ref.columns;
    if (ref.columns.length !== 2 || org?.name !== 'organisation_id' || !column) return [];
    const unique = uniques.some((u) => u.size === 1 && u.has(column.name));
    return [{ name: fk.getName(), field: column.name, table: getTableConfig(ref.foreignTable).name, unique }];
  });

  return {
    name: def.name,
    table: config.name,
    description: def.description,
    verbs: new Set(def.verbs),
    fields,
    key: [...key],
    customFields: def.customFields && customFieldsOf(def.name, def.customFields),
    rules: def.rules ?? [],
    references,
    collection: def.collection,
    keyset,
    imports: def.imports && {
      customFields: def.imports.customFields && customFieldsOf(def.name, def.imports.customFields),
    },
    relations: [],
    aggregates: def.aggregates ?? true,
    field: (name) => byName.get(name),
  };
}

/**
 * Every relation of `resource`: each foreign key from its table to a readable resource's table
 * (to one), each foreign key from a readable resource's table to its table (to many, or to one
 * when unique), and each junction table relating the two (many to many).
 */
function relationsOf(resource: Resource, def: ResourceDefinition, resources: readonly Resource[]): Relation[] {
  const readable = resources.filter((r) => r.verbs.has('GET'));
  // A junction: a table whose key holds two of its references (several resources may share it).
  const tables = [...new Map(resources.map((r) => [r.table, r])).values()];
  const relations: Relation[] = [];
  const add = (target: Resource, relation: Omit<Relation, 'name' | 'target'>) =>
    relations.push({ name: target.name, target, ...relation });
  for (const target of readable) {
    for (const ref of resource.references) {
      if (ref.table !== target.table) continue;
      const { name, field } = ref;
      add(target, {
        foreignKey: name,
        referencing: field,
        cardinality: 'one',
        parentField: field,
        targetField: 'id',
        junction: null,
      });
    }
    for (const ref of target.references) {
      if (ref.table !== resource.table) continue;
      const { name, field } = ref;
      const cardinality = ref.unique ? 'one' : 'many';
      add(target, {
        foreignKey: name,
        referencing: field,
        cardinality,
        parentField: 'id',
        targetField: field,
        junction: null,
      });
    }
    for (const junction of tables) {
      for (const from of junction.references) {
        for (const to of junction.references) {
          const keyed = junction.key.includes(from.field) && junction.key.includes(to.field);
          if (from === to || !keyed || from.table !== resource.table || to.table !== target.table) continue;
          add(target, {
            foreignKey: junction.table,
            referencing: junction.table,
            cardinality: 'many',
            parentField: 'id',
            targetField: 'id',
            junction: { table: junction.table, parentField: from.field, targetField: to.field },
          });
        }
      }
    }
  }
  const keys = new Set(relations.map((r) => r.foreignKey));
  for (const name of Object.keys(def.relations ?? {})) {
    if (!keys.has(name)) throw new Error(`registry: ${def.name}.relations names '${name}', which is no relation of it`);
  }
  return relations.flatMap((relation) => {
    const renamed = def.relations?.[relation.foreignKey];
    if (renamed === false) return [];
    return [renamed === undefined ? relation : { ...relation, name: renamed }];
  });
}

/**
 * The registry of the given resources, checked against their tables.
 * @example
 * const registry = createRegistry(resources); // resources from schema/registry.ts
 */
export function createRegistry(definitions: readonly ResourceDefinition[]): Registry {
  const resources = definitions.map(buildResource);
  // Relations point at other resources, so they are filled in once every resource is built.
  resources.forEach((resource, i) => {
    (resource.relations as Relation[]).push(...relationsOf(resource, definitions[i]!, resources));
  });
  const byName = new Map<string, Resource>();
  const byCollection = new Map<string, Resource>();
  for (const resource of resources) {
    if (byName.has(resource.name)) throw new Error(`registry: resource '${resource.name}' is defined twice`);
    byName.set(resource.name, resource);
    if (resource.collection === undefined) continue;
    if (byCollection.has(resource.collection)) throw new Error(`registry: collection '${resource.collection}' twice`);
    byCollection.set(resource.collection, resource);
  }
  return { resources, get: (name) => byName.get(name), collection: (name) => byCollection.get(name) };
}
