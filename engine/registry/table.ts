/**
 * What the registry reads off a drizzle table, once: its columns with their SQL types and defaults,
 * its primary key, the column sets it keeps unique or indexes, and its foreign keys. Constraints
 * declared on a column (`.primaryKey()`, `.unique()`, `.references()`) count as the table's own.
 */
import { type Column, is, SQL } from 'drizzle-orm';
import {
  getMaterializedViewConfig,
  getTableConfig,
  getViewConfig,
  isPgMaterializedView,
  isPgView,
  PgColumn,
  PgDialect,
  type PgMaterializedView,
  type PgTable,
  type PgView,
} from 'drizzle-orm/pg-core';
import type { EnumType } from '../field-kinds.ts';

export interface ColumnShape {
  readonly name: string;
  readonly sqlType: string;
  readonly notNull: boolean;
  readonly enumValues: readonly string[] | undefined;
  /** The database enum the column (or its arrays' elements) holds values of, if any. */
  readonly enumType: EnumType | undefined;
  /** A plain default value (false, 0, 'virtual'). */
  readonly defaultValue: unknown;
  /**
   * What the database fills in when an insert leaves the column out, as SQL: a default expression
   * (`gen_random_uuid()`, `now()`) or the next value of a serial or identity (by default) column.
   */
  readonly defaultSql: string | undefined;
  /** `GENERATED ALWAYS AS IDENTITY`: the database alone sets it. */
  readonly alwaysGenerated: boolean;
  /** `GENERATED ALWAYS AS (expression) STORED`: computed from the row's other columns, never written. */
  readonly computed: boolean;
}

/** What a resource serves: a table, a view or a materialized view. */
export type Source = PgTable | PgView | PgMaterializedView;

/** A view or a materialized view: no keys or foreign keys of its own (the definition declares them). */
export const viewKind = (source: Source): 'view' | 'materialized' | null =>
  isPgView(source) ? 'view' : isPgMaterializedView(source) ? 'materialized' : null;

export interface ForeignKeyShape {
  readonly name: string;
  /**
   * The name PostgreSQL gives such a foreign key when its SQL names none (`book_genre_code_fkey`),
   * which a database made by hand has where the drizzle schema names it otherwise.
   */
  readonly defaultName: string;
  readonly columns: readonly string[];
  readonly table: Source;
  readonly targetColumns: readonly string[];
}

export interface TableShape {
  readonly name: string;
  readonly columns: ReadonlyMap<string, ColumnShape>;
  /** The primary key's columns; empty when the table has none. */
  readonly primaryKey: readonly string[];
  /** Column lists the table keeps unique: its primary key and its unique constraints. */
  readonly uniques: readonly (readonly string[])[];
  /** Column lists an index serves in this order: every index, unique constraint and the primary key. */
  readonly indexes: readonly (readonly string[])[];
  readonly foreignKeys: readonly ForeignKeyShape[];
}

const dialect = new PgDialect();
const names = (columns: readonly { name: string }[]) => columns.map((c) => c.name);

/** A pgEnum column's enum, or that of an array's elements. */
interface EnumBearing {
  readonly enum?: { readonly enumName: string; readonly schema?: string; readonly enumValues: readonly string[] };
  readonly baseColumn?: EnumBearing;
}

function enumOf(column: EnumBearing): EnumType | undefined {
  const found = column.enum ?? column.baseColumn?.enum;
  return found && { name: found.enumName, schema: found.schema, values: found.enumValues };
}

function columnShape(table: string, column: Column): ColumnShape {
  const sqlType = column.getSQLType();
  const identity = (column as Column & { generatedIdentity?: { type: 'always' | 'byDefault' } }).generatedIdentity;
  const sequence = identity !== undefined || sqlType === 'serial';
  const quoted = `"${table.replace(/"/g, '""')}"`.replace(/'/g, "''");
  let defaultSql: string | undefined;
  if (column.default instanceof SQL) defaultSql = dialect.sqlToQuery(column.default).sql;
  // An identity generated always takes no value but its own: inserts leave it out.
  else if (sequence && identity?.type !== 'always')
    defaultSql = `nextval(pg_get_serial_sequence('${quoted}', '${column.name.replace(/'/g, "''")}'))`;
  return {
    name: column.name,
    sqlType,
    notNull: column.notNull,
    enumValues: column.enumValues?.length ? column.enumValues : undefined,
    enumType: enumOf(column as unknown as EnumBearing),
    defaultValue: column.default instanceof SQL ? undefined : column.default,
    defaultSql,
    alwaysGenerated: identity?.type === 'always',
    computed: column.generated?.type === 'always',
  };
}

/** A view's columns, each as its view names it; the rest (keys, references) its definition declares. */
function readView(view: PgView | PgMaterializedView): TableShape {
  const config = isPgView(view) ? getViewConfig(view) : getMaterializedViewConfig(view as PgMaterializedView);
  const columns = Object.entries(config.selectedFields).map(([name, field]) => {
    if (!is(field, PgColumn)) {
      throw new Error(
        `registry: view ${config.name}: its field ${name} is an expression; declare the view's columns` +
          ' (pgView(name, { ...columns }).existing()) so that their types are known',
      );
    }
    // A view declared with its columns keys them by property (authorId: integer('author_id')); one
    // built by a query names each by its key (writer: author.fullName).
    const column = field as Column;
    const property = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) === column.name;
    return {
      ...columnShape(config.name, column),
      name: property ? column.name : name,
      defaultValue: undefined,
      defaultSql: undefined,
    };
  });
  return {
    name: config.name,
    columns: new Map(columns.map((c) => [c.name, c])),
    primaryKey: [],
    uniques: [],
    indexes: [],
    foreignKeys: [],
  };
}

/** The shape of what a resource serves: a table's own, or a view's columns. */
export function readSource(source: Source): TableShape {
  return viewKind(source) ? readView(source as PgView | PgMaterializedView) : readTable(source as PgTable);
}

export function readTable(table: PgTable): TableShape {
  const config = getTableConfig(table);
  const primaryKey = [
    ...config.primaryKeys.flatMap((k) => names(k.columns)),
    ...config.columns.filter((c) => c.primary).map((c) => c.name),
  ];
  const uniques = [
    ...(primaryKey.length ? [primaryKey] : []),
    ...config.uniqueConstraints.map((u) => names(u.columns)),
    ...config.columns.filter((c) => c.isUnique).map((c) => [c.name]),
  ];
  // An index on an expression serves no column list: its entries are ''.
  const indexes = [
    ...uniques,
    ...config.indexes.map((i) => i.config.columns.map((c) => ('name' in c ? (c.name ?? '') : ''))),
  ];
  const foreignKeys = config.foreignKeys.map((fk) => {
    const reference = fk.reference();
    return {
      name: fk.getName(),
      defaultName: defaultConstraintName(config.name, names(reference.columns), 'fkey'),
      columns: names(reference.columns),
      table: reference.foreignTable,
      targetColumns: names(reference.foreignColumns),
    };
  });
  return {
    name: config.name,
    columns: new Map(config.columns.map((c) => [c.name, columnShape(config.name, c)])),
    primaryKey,
    uniques,
    indexes,
    foreignKeys,
  };
}

/** PostgreSQL's longest identifier, in bytes (NAMEDATALEN - 1). */
const MAX_NAME = 63;

/** `text` cut to at most `bytes` bytes of UTF-8, at a character's boundary. */
function clip(text: string, bytes: number): string {
  let out = '';
  for (const char of text) {
    if (Buffer.byteLength(out + char) > bytes) break;
    out += char;
  }
  return out;
}

/**
 * The name PostgreSQL chooses for a constraint its SQL names none (ChooseConstraintName):
 * `<table>_<columns joined by _>_<label>`, the longer of the table's and the columns' part cut
 * first to keep it within 63 bytes. (Should that name be taken, PostgreSQL adds a number.)
 */
export function defaultConstraintName(table: string, columns: readonly string[], label: string): string {
  let joined = '';
  for (const column of columns) {
    joined = clip(joined ? `${joined}_${column}` : column, MAX_NAME);
    if (Buffer.byteLength(joined) >= MAX_NAME) break;
  }
  const available = MAX_NAME - (Buffer.byteLength(label) + 1) - 1;
  let [first, second] = [Buffer.byteLength(table), Buffer.byteLength(joined)];
  while (first + second > available) {
    if (first > second) first--;
    else second--;
  }
  return `${clip(table, first)}_${clip(joined, second)}_${label}`;
}

/** The table's (or view's) name, without reading the rest. */
export const tableName = (source: Source): string =>
  isPgView(source)
    ? getViewConfig(source).name
    : isPgMaterializedView(source)
      ? getMaterializedViewConfig(source).name
      : getTableConfig(source as PgTable).name;
