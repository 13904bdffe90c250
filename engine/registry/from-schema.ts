/**
 * Resource definitions for every table and view of a drizzle schema module, such as `drizzle-kit
 * pull` writes from a live database: the engine pointed at a database a team already has.
 */
import { is } from 'drizzle-orm';
import { PgTable } from 'drizzle-orm/pg-core';
import type { ResourceDefinition, Verb } from './index.ts';
import { readSource, type Source, tableName, viewKind } from './table.ts';

export interface FromSchemaOptions {
  /** The verbs each resource offers: the same for all, or by resource name (default: GET). */
  readonly verbs?: readonly Verb[] | Readonly<Record<string, readonly Verb[]>>;
  /** The registry's tenant column (createRegistry's `tenant`): a table without it is every tenant's. */
  readonly tenant?: string;
  /**
   * What a view lacks, by its name: its key (else its `id` column) and its references
   * (`{ author_id: 'author' }`).
   */
  readonly views?: Readonly<
    Record<string, { readonly key?: readonly string[]; readonly references?: Readonly<Record<string, string>> }>
  >;
  /** Tables and views not to serve, by name. */
  readonly exclude?: readonly string[];
}

/** A table or view among a module's exports. */
const isSource = (value: unknown): value is Source => is(value, PgTable) || viewKind(value as Source) !== null;

/**
 * @example
 * import * as schema from './drizzle/schema.ts'; // drizzle-kit pull
 * const registry = createRegistry(resourcesFrom(schema, { verbs: ['GET', 'POST'], tenant: 'workspace_id' }), {
 *   tenant: 'workspace_id',
 * });
 */
export function resourcesFrom(
  schema: Readonly<Record<string, unknown>>,
  options: FromSchemaOptions = {},
): ResourceDefinition[] {
  const excluded = new Set(options.exclude ?? []);
  const sources = [...new Set(Object.values(schema).filter(isSource))].filter((s) => !excluded.has(tableName(s)));
  return sources.map((table) => {
    const name = tableName(table);
    const shape = readSource(table);
    const kind = viewKind(table);
    const verbs = Array.isArray(options.verbs)
      ? options.verbs
      : ((options.verbs as Readonly<Record<string, readonly Verb[]>> | undefined)?.[name] ?? ['GET']);
    const tenant = options.tenant !== undefined && !shape.columns.has(options.tenant) ? { tenant: false as const } : {};
    const columns = [...shape.columns.keys()];
    if (!kind) return { name, table, verbs, orderable: columns, ...tenant };
    const declared = options.views?.[name];
    const key = declared?.key ?? (shape.columns.has('id') ? ['id'] : undefined);
    if (!key) {
      throw new Error(
        `resourcesFrom: view ${name} has no id column to key it by: give its key in views: { ${name}: { key: [...] } },` +
          ` or exclude it`,
      );
    }
    return {
      name,
      table,
      verbs: kind === 'materialized' ? ['GET'] : verbs,
      orderable: columns,
      key,
      ...(declared?.references && { references: declared.references }),
      ...tenant,
    };
  });
}
