/**
 * The resource registry: what the API serves, read once at start-up. A resource definition names
 * its drizzle table and says which verbs it offers, which fields may be filtered and ordered and
 * which are managed by the server. Field names, SQL types, enums and nullability are derived from
 * the table, so the registry cannot disagree with the database.
 */
import { SQL } from 'drizzle-orm';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';

export const VERBS = ['GET', 'POST', 'PATCH', 'DELETE'] as const;
export type Verb = (typeof VERBS)[number];

/** The value kinds the engine knows how to filter, validate and describe. */
export type FieldKind =
  | 'uuid'
  | 'text'
  | 'boolean'
  | 'integer'
  | 'numeric'
  | 'date'
  | 'timestamptz'
  | 'text[]'
  | 'jsonb';

const KIND_BY_SQL_TYPE: Record<string, FieldKind> = {
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
  readonly hasDefault: boolean;
  /** The column's default when it is a plain value (false, 0, 'virtual'), for `Prefer: missing=default`. */
  readonly defaultValue: unknown;
  readonly filterable: boolean;
  readonly orderable: boolean;
  /** Set by the server (ids, timestamps, organisation); a client value is ignored or refused. */
  readonly serverManaged: boolean;
  /** Part of an index or unique constraint, which bounds how long its values may be. */
  readonly indexed: boolean;
  readonly description: string | undefined;
}

export type CustomFieldEntity = 'contact' | 'deal' | 'appointment';

/** Custom-field values shown as extra properties, named by `custom_field.key`. */
export interface CustomFieldsDefinition {
  readonly entity: CustomFieldEntity;
  /** The value table, shaped like `appointment_custom_field`. */
  readonly values: PgTable;
  /** Its column that points at the resource's `id`. */
  readonly parentKey: string;
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
  /** Fields `order` may name; none when absent. */
  readonly orderable?: readonly string[];
  /** Fields filters may name; every field when absent. */
  readonly filterable?: readonly string[];
  /** Defaults to id, created_at, updated_at and organisation_id. */
  readonly serverManaged?: readonly string[];
  readonly customFields?: CustomFieldsDefinition;
  readonly fieldDescriptions?: Readonly<Record<string, string>>;
  readonly rules?: readonly FieldRule[];
}

export interface Resource {
  readonly name: string;
  readonly table: string;
  readonly description: string | undefined;
  readonly verbs: ReadonlySet<Verb>;
  readonly fields: readonly Field[];
  readonly customFields:
    | { readonly entity: CustomFieldEntity; readonly table: string; readonly parentKey: string }
    | undefined;
  readonly rules: readonly FieldRule[];
  field(name: string): Field | undefined;
}

export interface Registry {
  readonly resources: readonly Resource[];
  get(name: string): Resource | undefined;
}

const DEFAULT_SERVER_MANAGED = ['id', 'created_at', 'updated_at', 'organisation_id'];

/** Typed identity: lets a registry entry be written as a plain object literal. */
export const defineResource = (definition: ResourceDefinition): ResourceDefinition => definition;

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
  mustExist(
    def.rules?.map((r) => r.field),
    'rules',
  );
  if (!columns.has('organisation_id')) throw new Error(`registry: ${config.name} has no organisation_id`);

  const indexed = new Set(
    [...config.indexes.flatMap((i) => i.config.columns), ...config.uniqueConstraints.flatMap((u) => u.columns)].map(
      (c) => ('name' in c ? c.name : ''),
    ),
  );
  const orderable = new Set(def.orderable ?? []);
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
      hasDefault: column.hasDefault,
      defaultValue: column.default instanceof SQL ? undefined : column.default,
      filterable: filterable ? filterable.has(column.name) : true,
      orderable: orderable.has(column.name),
      serverManaged: serverManaged.has(column.name),
      indexed: indexed.has(column.name),
      description: def.fieldDescriptions?.[column.name],
    };
  });
  const byName = new Map(fields.map((f) => [f.name, f]));

  let customFields: Resource['customFields'];
  if (def.customFields) {
    const values = getTableConfig(def.customFields.values);
    if (!values.columns.some((c) => c.name === def.customFields?.parentKey)) {
      throw new Error(`registry: ${values.name} has no column ${def.customFields.parentKey}`);
    }
    customFields = { entity: def.customFields.entity, table: values.name, parentKey: def.customFields.parentKey };
  }

  return {
    name: def.name,
    table: config.name,
    description: def.description,
    verbs: new Set(def.verbs),
    fields,
    customFields,
    rules: def.rules ?? [],
    field: (name) => byName.get(name),
  };
}

export function createRegistry(definitions: readonly ResourceDefinition[]): Registry {
  const resources = definitions.map(buildResource);
  const byName = new Map<string, Resource>();
  for (const resource of resources) {
    if (byName.has(resource.name)) throw new Error(`registry: resource '${resource.name}' is defined twice`);
    byName.set(resource.name, resource);
  }
  return { resources, get: (name) => byName.get(name) };
}
