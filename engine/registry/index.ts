/**
 * The resource registry: what the API serves, read once at start-up. A resource definition names
 * its drizzle table and says which verbs it offers, which fields may be filtered and ordered and
 * which are managed by the server. Field names, kinds, enums, nullability, keys, defaults and
 * references are read from the table, so the registry cannot disagree with the database; the
 * registry declares the tenancy (`createRegistry(resources, { tenant: 'workspace_id' })`) and
 * checks every convention the engine relies on, refusing a schema that breaks one with a sentence
 * naming the resource and the fix.
 */
import type { PgTable } from 'drizzle-orm/pg-core';
import { CUSTOM_FIELD_TYPES } from '../custom-fields.ts';
import { type ColumnType, columnType, type FieldKind } from '../field-kinds.ts';
import {
  type EventsDefinition,
  type RegistryEvents,
  type ResourceEvents,
  registryEvents,
  resourceEvents,
  typesRule,
} from './events.ts';
import { type FunctionDefinition, functionsOf, type RegistryFunction } from './functions.ts';
import { referencesOf, relationsOf } from './relations.ts';
import { readSource, readTable, type Source, type TableShape, tableName, viewKind } from './table.ts';

export const VERBS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type Verb = (typeof VERBS)[number];

export interface Field {
  readonly name: string;
  /** Its type's kind (`type.kind`), which decides how its values are checked and what applies to them. */
  readonly kind: FieldKind;
  readonly type: ColumnType;
  readonly enum: readonly string[] | undefined;
  readonly nullable: boolean;
  /** The column's default when it is a plain value (false, 0, 'virtual'), for `Prefer: missing=default`. */
  readonly defaultValue: unknown;
  /** What the database gives a row that leaves the field out, as SQL (`gen_random_uuid()`, an identity's next value). */
  readonly defaultSql: string | undefined;
  readonly filterable: boolean;
  /** An allowed order field, or a field of the table's key (clients sort by the key by default). */
  readonly orderable: boolean;
  /**
   * Set by the server: a body's value is ignored, except that a key field may be given on create
   * and the tenant column must name the caller's own tenant.
   */
  readonly serverManaged: boolean;
  /**
   * The database alone sets it (`GENERATED ALWAYS`: an identity, or a column computed from the
   * others): a body giving it is refused.
   */
  readonly generated: boolean;
  /** Part of an index or unique constraint, which bounds how long its values may be. */
  readonly indexed: boolean;
  readonly description: string | undefined;
}

/** Custom-field values kept in a value table shaped like `appointment_custom_field`. */
export interface CustomFieldsDefinition {
  /** The `entity` of the definitions whose fields these are. */
  readonly entity: string;
  /** The value table. */
  readonly values: PgTable;
  /** Its column that points at the record's key. */
  readonly parentKey: string;
  /** The table of custom-field definitions (`custom_field`): id, key, type and entity of each field. */
  readonly definitions: PgTable;
}

export interface CustomFields {
  readonly entity: string;
  /** The value table. */
  readonly table: string;
  readonly parentKey: string;
  /** The table of custom-field definitions. */
  readonly definitions: string;
  /** The tenant column of both tables, in a tenanted registry. */
  readonly tenant: string | null;
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
  /** A drizzle table, or a view (`pgView`, `pgMaterializedView`, `.existing()` ones included). */
  readonly table: Source;
  /**
   * A view's key, which it lacks (its unique fields: `['id']`); in a tenanted registry the tenant
   * column leads it, as in a table's.
   */
  readonly key?: readonly string[];
  /** A view's references, which it lacks: the resource each field's value is the key of (`{ author_id: 'author' }`). */
  readonly references?: Readonly<Record<string, string>>;
  readonly description?: string;
  readonly verbs: readonly Verb[];
  /**
   * `false`: the rows are shared by every tenant (a list of countries), read and written without a
   * tenant filter. Tenanted by default in a registry with a tenant.
   */
  readonly tenant?: false;
  /** Fields `order` may name besides the table's key; none when absent. */
  readonly orderable?: readonly string[];
  /** Fields filters may name; every field when absent. */
  readonly filterable?: readonly string[];
  /**
   * Fields the server sets besides the tenant column, which always is. By default `created_at` and
   * `updated_at` where the table has them, and key fields the database generates (which a create
   * may still give).
   */
  readonly serverManaged?: readonly string[];
  /** Custom-field values shown as extra properties named by each definition's key (`*_details`). */
  readonly customFields?: CustomFieldsDefinition;
  readonly fieldDescriptions?: Readonly<Record<string, string>>;
  readonly rules?: readonly FieldRule[];
  /** Its name in a host's versioned routes (`/v1/<collection>`), where its keyset pages and imports are. */
  readonly collection?: string;
  /** Keyset pages ordered by these non-null fields, which an index must serve and which together are unique. */
  readonly keyset?: readonly string[];
  /**
   * Batch imports: items matched on `key` (one field, unique within the tenant: `['external_id']`)
   * and updated, or created; with these custom fields.
   */
  readonly imports?: { readonly key: readonly [string]; readonly customFields?: CustomFieldsDefinition };
  /**
   * The relations embeds may follow are derived from foreign keys, named by the resource at the
   * other end. By foreign key name: `false` hides that relation of this resource, a string renames it.
   */
  readonly relations?: Readonly<Record<string, string | false>>;
  /** Whether `select` may aggregate (`count()`, `value.sum()`); true when absent. */
  readonly aggregates?: boolean;
  /**
   * Writes record events named `<events>.created|updated|deleted`, one per row, for the tenant's
   * subscriptions (`RegistryOptions.events`, registry/events.ts).
   */
  readonly events?: string;
  /**
   * Fields the database generates that only the representation of the POST creating the row shows
   * (a signing secret): never read, filtered, ordered or written afterwards.
   */
  readonly shownOnce?: readonly string[];
  /**
   * Its GET can be a stream of changes (`Accept: text/event-stream`), and every GET tells its
   * Change-Position: `install()` puts triggers on its table that log each committed change, whoever
   * writes it. A table's, not a view's. `RegistryOptions.changes` gives it to every such resource.
   */
  readonly changes?: boolean;
}

export interface RegistryOptions {
  /**
   * The column naming each row's tenant (`organisation_id`, `workspace_id`): every tenanted table
   * has it, its keys and foreign keys lead with it, and every statement filters by it. Left out,
   * the registry is single-tenant: requests need no scope.
   */
  readonly tenant?: string;
  /** The table of subscriptions to the events of writes (registry/events.ts); no events when absent. */
  readonly events?: EventsDefinition;
  /** Database functions served at `<mount>/rpc/<name>` (registry/functions.ts). */
  readonly functions?: readonly FunctionDefinition[];
  /** Every resource served with GET from a table streams its changes, unless it says `changes: false`. */
  readonly changes?: boolean;
}

/** The registry's tenancy: its column, that column's kind, and what messages call a tenant. */
export interface Tenancy {
  readonly column: string;
  readonly kind: FieldKind;
  readonly type: ColumnType;
  /** The column without its `_id`: "organisation", "workspace". */
  readonly noun: string;
}

/** A foreign key the engine follows, its tenant columns left out: `fields` name the row of `table` whose `targetFields` match. */
export interface Reference {
  /** The foreign key's name. */
  readonly name: string;
  /** The names it may be called by: its own, and the one PostgreSQL gives it when its SQL names none. */
  readonly names: readonly string[];
  readonly fields: readonly string[];
  readonly table: string;
  readonly targetFields: readonly string[];
  /** Whether the referenced table's rows have a tenant: a look-up then stays inside the caller's. */
  readonly targetTenanted: boolean;
  /** Whether each record references a different row (`fields` are unique in the tenant): one to one. */
  readonly unique: boolean;
}

/** A table whose key holds two of its references: it relates their rows many to many. */
export interface Junction {
  readonly table: string;
  /** Its tenant column, when it is tenanted. */
  readonly tenant: string | null;
  /** Its fields referencing the parent, and those referencing the target. */
  readonly parentFields: readonly string[];
  readonly targetFields: readonly string[];
}

/**
 * A way from one resource to another that `select` can embed, from a foreign key read in either
 * direction: to one (deal -> its contact; or back, when the reference is unique) or to many
 * (contact -> its deals), or through a junction table, many to many. Rows are matched on
 * `target.targetFields = parent.parentFields` (or through the junction), inside the caller's tenant.
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
  /** The names `!hint` and `relations` may give the foreign key: its own, and PostgreSQL's default one. */
  readonly foreignKeyNames: readonly string[];
  /** The foreign key's own fields; a single one also names the relation (to one) or hints it. */
  readonly columns: readonly string[];
  readonly cardinality: 'one' | 'many';
  /** Where the foreign key is: on the parent (to one), on the target, or on a junction table. */
  readonly via: 'parent' | 'target' | 'junction';
  readonly parentFields: readonly string[];
  readonly targetFields: readonly string[];
  readonly junction: Junction | null;
}

export interface Resource {
  readonly name: string;
  readonly table: string;
  /** Served from a view or a materialized view, rather than a table. */
  readonly view: boolean;
  readonly description: string | undefined;
  readonly verbs: ReadonlySet<Verb>;
  readonly fields: readonly Field[];
  /** The tenant column, on a tenanted resource; null on a shared one and in a single-tenant registry. */
  readonly tenant: Field | null;
  /** The fields of the table's primary key besides the tenant column. */
  readonly key: readonly Field[];
  /** Whether the table has `updated_at`, which every update then moves. */
  readonly updatedAt: boolean;
  readonly customFields: CustomFields | undefined;
  readonly rules: readonly FieldRule[];
  readonly references: readonly Reference[];
  readonly collection: string | undefined;
  readonly keyset: readonly Field[] | undefined;
  readonly imports: { readonly key: Field; readonly customFields: CustomFields | undefined } | undefined;
  /** What `select` can embed from this resource; only resources offering GET are embedded. */
  readonly relations: readonly Relation[];
  readonly aggregates: boolean;
  /** The events its writes record, when it has them. */
  readonly events: ResourceEvents | null;
  /** Fields only the representation of its create shows, not among `fields`. */
  readonly shownOnce: readonly Field[];
  /** Whether its GET can be a stream of changes. */
  readonly changes: boolean;
  /** The field sets (its key first) that tell its rows apart within a tenant. */
  readonly uniques: readonly (readonly Field[])[];
  field(name: string): Field | undefined;
}

export interface Registry {
  readonly resources: readonly Resource[];
  /** The tenancy, or null for a single-tenant registry. */
  readonly tenant: Tenancy | null;
  get(name: string): Resource | undefined;
  /** The resource a versioned-API collection (`contacts`) names. */
  collection(name: string): Resource | undefined;
  /** The events of writes, when the registry declares them. */
  readonly events: RegistryEvents | null;
  /** The functions served at `/rpc/<name>`, in the order declared. */
  readonly functions: readonly RegistryFunction[];
  function(name: string): RegistryFunction | undefined;
}

/**
 * Typed identity: lets a registry entry be written as a plain object literal.
 * @example
 * defineResource({ name: 'ticket', table: t.ticket, verbs: ['GET'], orderable: ['priority'] })
 */
export const defineResource = (definition: ResourceDefinition): ResourceDefinition => definition;

/** A convention a definition breaks: the resource, what is wrong, and what to change. */
const refuse = (resource: string, sentence: string): Error => new Error(`registry: ${resource}: ${sentence}`);

const list = (names: readonly string[]) => names.join(', ');
const sameColumns = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((name, i) => name === b[i]);

/** The columns a custom-field value table and its definitions table must have, besides the tenant. */
const VALUE_COLUMNS = [
  'custom_field_id',
  'key',
  'value',
  'updated_at',
  ...Object.values(CUSTOM_FIELD_TYPES).map((t) => t.column),
];
const DEFINITION_COLUMNS = ['id', 'key', 'type', 'entity'];

function customFieldsOf(owner: string, def: CustomFieldsDefinition, tenant: string | null): CustomFields {
  const values = readTable(def.values);
  const definitions = readTable(def.definitions);
  const missing = (shape: TableShape, columns: readonly string[]) => columns.filter((c) => !shape.columns.has(c));
  const lacking = [
    ...missing(values, [def.parentKey, ...VALUE_COLUMNS, ...(tenant ? [tenant] : [])]).map(
      (c) => `${values.name}.${c}`,
    ),
    ...missing(definitions, [...DEFINITION_COLUMNS, ...(tenant ? [tenant] : [])]).map(
      (c) => `${definitions.name}.${c}`,
    ),
  ];
  if (lacking.length > 0) {
    throw refuse(
      owner,
      `its custom fields need ${list(lacking)}: a value table with ${list(VALUE_COLUMNS)} (and its parent key),` +
        ' and a definitions table with id, key, type and entity',
    );
  }
  return { entity: def.entity, table: values.name, parentKey: def.parentKey, definitions: definitions.name, tenant };
}

interface Context {
  readonly tenant: string | null;
  readonly events: RegistryEvents | null;
  /** Whether the rows of a table have a tenant, and its name: a resource's say, else whether it has the column. */
  readonly tableInfo: (table: Source) => { name: string; tenanted: boolean };
  /** Whether resources served with GET from a table stream their changes unless they say otherwise. */
  readonly changes: boolean;
}

function buildResource(def: ResourceDefinition, shape: TableShape, context: Context): Resource {
  const { tenant } = context;
  const tenanted = tenant !== null && def.tenant !== false;
  const { columns } = shape;
  const mustExist = (names: readonly string[] | undefined, what: string) => {
    for (const name of names ?? []) {
      if (!columns.has(name)) {
        throw refuse(
          def.name,
          `${what} names '${name}', which table ${shape.name} lacks; its columns are ${list([...columns.keys()])}`,
        );
      }
    }
  };
  mustExist(def.orderable, 'orderable');
  mustExist(def.filterable, 'filterable');
  mustExist(def.serverManaged, 'serverManaged');
  mustExist(def.keyset, 'keyset');
  mustExist(def.shownOnce, 'shownOnce');
  if (def.changes && (viewKind(def.table) || !def.verbs.includes('GET'))) {
    throw refuse(
      def.name,
      'changes are streamed by GET from triggers on a table: offer GET, from a table, or drop changes',
    );
  }
  mustExist(
    def.rules?.map((r) => r.field),
    'rules',
  );
  if (tenanted && !columns.has(tenant)) {
    throw refuse(
      def.name,
      `table ${shape.name} has no column ${tenant}, the registry's tenant; add it (and lead its primary key with it),` +
        ' or declare the resource tenant: false if every tenant shares its rows',
    );
  }
  if (shape.primaryKey.length === 0) {
    throw refuse(
      def.name,
      viewKind(def.table)
        ? `view ${shape.name} has no key; declare the fields that tell its rows apart: key: ['id']`
        : `table ${shape.name} has no primary key; declare one${tenanted ? `, led by ${tenant}` : ''}`,
    );
  }
  if (tenanted && shape.primaryKey[0] !== tenant) {
    throw refuse(
      def.name,
      `the primary key of ${shape.name} (${list(shape.primaryKey)}) must lead with ${tenant}, so that keys stay` +
        ` inside a tenant: primaryKey({ columns: [t.${tenant}, ${shape.primaryKey
          .filter((c) => c !== tenant)
          .map((c) => `t.${c}`)
          .join(', ')}] })`,
    );
  }
  if ((def.keyset || def.imports) && !def.collection) {
    throw refuse(def.name, 'keyset pages and imports are served under a collection name; add collection: "<name>"');
  }

  const lead = tenanted ? [tenant] : [];
  const key = shape.primaryKey.filter((c) => !tenanted || c !== tenant);
  const indexed = new Set(shape.indexes.flat());
  const orderable = new Set([...(def.orderable ?? []), ...key]);
  const filterable = def.filterable ? new Set(def.filterable) : null;
  const generated = (name: string) =>
    key.includes(name) && (columns.get(name)!.defaultSql !== undefined || columns.get(name)!.alwaysGenerated);
  // The tenant column is the scope's whatever the list says: a body may only name the caller's own.
  const serverManaged = new Set([
    ...lead,
    ...(def.serverManaged ?? ['created_at', 'updated_at', ...[...columns.keys()].filter(generated)]),
  ]);
  const generatedAlways = (name: string) => columns.get(name)!.alwaysGenerated || columns.get(name)!.computed;
  for (const name of columns.keys()) if (generatedAlways(name)) serverManaged.add(name);
  const shownOnce = new Set(def.shownOnce);
  const all: Field[] = [...columns.values()].map((column) => {
    const type = columnType(column.sqlType, column.enumType);
    return {
      name: column.name,
      kind: type.kind,
      type,
      enum: column.enumValues,
      nullable: !column.notNull,
      defaultValue: column.defaultValue,
      defaultSql: column.defaultSql,
      filterable: filterable ? filterable.has(column.name) : true,
      orderable: orderable.has(column.name),
      serverManaged: serverManaged.has(column.name),
      generated: generatedAlways(column.name),
      indexed: indexed.has(column.name),
      description: def.fieldDescriptions?.[column.name],
    };
  });
  const fields = all.filter((f) => !shownOnce.has(f.name));
  const hidden = all.filter((f) => shownOnce.has(f.name));
  if (hidden.some((f) => f.defaultSql === undefined || key.includes(f.name))) {
    throw refuse(def.name, 'a field shownOnce is one the database generates (it needs a default) and not a key field');
  }
  const byName = new Map(fields.map((f) => [f.name, f]));

  const keyset = def.keyset?.map((name) => byName.get(name)!);
  if (keyset) {
    const names = keyset.map((f) => f.name);
    const nullable = keyset.filter((f) => f.nullable);
    if (nullable.length > 0) {
      throw refuse(
        def.name,
        `keyset names ${list(nullable.map((f) => f.name))}, which may be null; keyset fields must be not null`,
      );
    }
    const wanted = [...lead, ...names];
    if (!shape.indexes.some((columns) => sameColumns(columns.slice(0, wanted.length), wanted))) {
      throw refuse(
        def.name,
        `keyset pages need an index on (${list(wanted)}), which ${shape.name} lacks;` +
          ` add index('${shape.name}_${names.join('_')}_idx').on(${wanted.map((c) => `t.${c}`).join(', ')})`,
      );
    }
    if (!shape.uniques.some((unique) => unique.every((c) => wanted.includes(c)))) {
      throw refuse(def.name, `keyset (${list(names)}) must tell every row apart: end it with the key (${list(key)})`);
    }
  }
  if (def.imports) {
    const [name, ...more] = def.imports.key;
    if (name === undefined || more.length > 0)
      throw refuse(def.name, "imports match items on one field: key: ['<field>']");
    mustExist([name], 'imports.key');
    const matched = [...lead, name];
    if (!shape.uniques.some((u) => sameColumns([...u].sort(), [...matched].sort()))) {
      throw refuse(
        def.name,
        `imports match items on ${name}, so ${shape.name} needs a unique constraint on (${list(matched)}):` +
          ` unique().on(${matched.map((c) => `t.${c}`).join(', ')})`,
      );
    }
  }
  if ((def.imports || def.customFields) && key.length !== 1) {
    throw refuse(
      def.name,
      `custom fields and imports name a record by one key field, and ${shape.name}'s key is (${list(key)})`,
    );
  }
  return {
    name: def.name,
    table: shape.name,
    view: viewKind(def.table) !== null,
    description: def.description,
    verbs: new Set(def.verbs),
    fields,
    tenant: tenanted ? byName.get(tenant)! : null,
    key: key.map((name) => byName.get(name)!),
    updatedAt: columns.has('updated_at'),
    customFields: def.customFields && customFieldsOf(def.name, def.customFields, tenanted ? tenant : null),
    rules: [
      ...(def.rules ?? []),
      ...(context.events && context.events.subscribers.table === shape.name ? [typesRule(context.events)] : []),
    ],
    references: referencesOf(shape, tenant, tenanted, context.tableInfo),
    collection: def.collection,
    keyset,
    imports: def.imports && {
      key: byName.get(def.imports.key[0])!,
      customFields:
        def.imports.customFields && customFieldsOf(def.name, def.imports.customFields, tenanted ? tenant : null),
    },
    relations: [],
    aggregates: def.aggregates ?? true,
    events: resourceEvents(def, context.events),
    shownOnce: hidden,
    changes: def.changes ?? (context.changes && def.verbs.includes('GET') && !viewKind(def.table)),
    uniques: shape.uniques
      .map((columns) => columns.filter((c) => !tenanted || c !== tenant).map((c) => byName.get(c)))
      .filter((fields): fields is Field[] => fields.length > 0 && fields.every((f) => f !== undefined)),
    field: (name) => byName.get(name),
  };
}

/**
 * The shapes of the resources' tables, with what a view's definition declares (its key and
 * references) in place of what a table's own constraints give.
 */
function viewShapes(
  definitions: readonly ResourceDefinition[],
  shapes: readonly TableShape[],
  tenant: string | null,
): TableShape[] {
  const byName = new Map(definitions.map((def, i) => [def.name, { def, shape: shapes[i]! }]));
  return definitions.map((def, i) => {
    const shape = shapes[i]!;
    const kind = viewKind(def.table);
    if (!kind) {
      if (def.key || def.references) {
        throw refuse(def.name, "key and references are a view's: a table declares its primary and foreign keys");
      }
      return shape;
    }
    if (kind === 'materialized' && def.verbs.some((v) => v !== 'GET')) {
      throw refuse(def.name, 'a materialized view is read-only: offer GET alone');
    }
    const lead = tenant !== null && def.tenant !== false && shape.columns.has(tenant) ? [tenant] : [];
    const primaryKey = def.key ? [...lead, ...def.key] : [];
    const foreignKeys = Object.entries(def.references ?? {}).map(([field, name]) => {
      const target = byName.get(name);
      if (!shape.columns.has(field)) {
        throw refuse(def.name, `references names '${field}', which view ${shape.name} lacks`);
      }
      const targetKey = target && (viewKind(target.def.table) ? (target.def.key ?? []) : target.shape.primaryKey);
      const own = targetKey?.filter((c) => c !== tenant) ?? [];
      if (!target || own.length !== 1) {
        throw refuse(def.name, `references.${field} must name a resource keyed by one field; '${name}' is not one`);
      }
      const targetLead = lead.length && target.shape.columns.has(tenant!) ? [tenant!] : [];
      return {
        name: `${shape.name}_${field}_fkey`,
        defaultName: `${shape.name}_${field}_fkey`,
        columns: [...(targetLead.length ? lead : []), field],
        table: target.def.table,
        targetColumns: [...targetLead, own[0]!],
      };
    });
    return { ...shape, primaryKey, uniques: primaryKey.length ? [primaryKey] : [], foreignKeys };
  });
}

/**
 * The registry of the given resources, checked against their tables.
 * @example
 * const registry = createRegistry(resources, { tenant: 'organisation_id' }); // schema/registry.ts
 */
export function createRegistry(definitions: readonly ResourceDefinition[], options: RegistryOptions = {}): Registry {
  const tenant = options.tenant ?? null;
  const shapes = viewShapes(
    definitions,
    definitions.map((def) => readSource(def.table)),
    tenant,
  );
  // Resources over one table (a `*_details` view) must agree on its tenancy.
  const tenancyOf = new Map<Source, boolean>();
  definitions.forEach((def) => {
    const tenanted = tenant !== null && def.tenant !== false;
    const known = tenancyOf.get(def.table);
    if (known !== undefined && known !== tenanted) {
      throw refuse(def.name, `its table is another resource's too, and only one of them says tenant: false`);
    }
    tenancyOf.set(def.table, tenanted);
  });
  const context: Context = {
    tenant,
    changes: options.changes ?? false,
    events: registryEvents(options.events, definitions, tenant),
    tableInfo: (table) => {
      const name = tableName(table);
      const known = tenancyOf.get(table);
      return { name, tenanted: known ?? (tenant !== null && readSource(table).columns.has(tenant)) };
    },
  };
  const resources = definitions.map((def, i) => buildResource(def, shapes[i]!, context));

  let tenancy: Tenancy | null = null;
  if (tenant !== null) {
    const types = new Map(resources.flatMap((r) => (r.tenant ? [[r.tenant.type.sql, r] as const] : [])));
    if (types.size > 1) {
      throw refuse(
        [...types.values()].map((r) => r.name).join(', '),
        `${tenant} must have one type in every table; it is ${list([...types.values()].map((r) => r.tenant!.type.declared))}`,
      );
    }
    const type = [...types.values()][0]?.tenant?.type ?? columnType('uuid');
    tenancy = { column: tenant, kind: type.kind, type, noun: tenant.replace(/_id$/, '') || tenant };
  }

  // Relations point at other resources, so they are filled in once every resource is built.
  resources.forEach((resource, i) => {
    (resource.relations as Relation[]).push(...relationsOf(resource, definitions[i]!, resources));
  });
  const byName = new Map<string, Resource>();
  const byCollection = new Map<string, Resource>();
  for (const resource of resources) {
    if (byName.has(resource.name)) throw refuse(resource.name, 'it is defined twice; give each resource its own name');
    byName.set(resource.name, resource);
    if (resource.collection === undefined) continue;
    if (byCollection.has(resource.collection)) {
      throw refuse(resource.name, `collection '${resource.collection}' is another resource's too`);
    }
    byCollection.set(resource.collection, resource);
  }
  const functions = functionsOf(options.functions ?? [], byName, tenant !== null);
  return {
    resources,
    tenant: tenancy,
    get: (name) => byName.get(name),
    collection: (name) => byCollection.get(name),
    events: context.events,
    functions: [...functions.values()],
    function: (name) => functions.get(name),
  };
}
