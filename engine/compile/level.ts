/**
 * One level of a read (the resource, or an embed) to a SELECT. Embeds are LEFT JOIN LATERAL
 * subqueries over the level's page, so they are built only for the rows returned:
 *
 *   SELECT <columns, eN.v> FROM (SELECT t.* FROM "deal" t WHERE <tenant> AND <filters>
 *     AND EXISTS (<each !inner embed>) ORDER BY ... LIMIT ... OFFSET ...) t
 *   LEFT JOIN LATERAL (SELECT to_json(_t) AS "v" FROM (<the embed's own level>) _t) e1 ON true
 *
 * A to-many embed aggregates its rows with json_agg; a spread gives its columns instead of one
 * object; a level with aggregates groups by its other columns (and by its to-one spreads'). Every
 * level is matched to its parent and to the caller's tenant (relation.ts).
 */
import { selectedAs } from '../field-kinds.ts';
import type { PlannedEmbed, ReadColumn, ReadLevel, Target } from '../plan/types.ts';
import type { Relation, Resource } from '../registry/index.ts';
import type { AggregateFunction } from '../request.ts';
import { rowColumn } from '../row-json.ts';
import { storedCustomFields } from './custom-fields.ts';
import { fieldValue, type Projection, projection, wholeRow } from './projection.ts';
import { related } from './relation.ts';
import { tenantFilter } from './scope.ts';
import { ident, type Params } from './sql.ts';
import { version } from './version.ts';
import { condition, type LevelContext, orderBy, target } from './where.ts';

/** The SQL of each aggregate `select` offers; the type checker holds it to every one. */
const AGGREGATE_SQL = {
  count: 'count',
  sum: 'sum',
  avg: 'avg',
  min: 'min',
  max: 'max',
} as const satisfies Record<AggregateFunction, string>;

/** How a level is tied to its parent row. */
interface Link {
  readonly relation: Relation;
  readonly parent: string;
  /** Whether the parent's rows have a tenant. */
  readonly tenanted: boolean;
}

export interface LevelOptions {
  readonly paged?: boolean;
  readonly csv?: boolean;
  /** Each column as its JSON's text or its text (field-kinds.ts, `toJson`), named by its position. */
  readonly text?: boolean;
  readonly written?: { readonly source: string; readonly customFields: string | null };
}

export interface CompiledLevel {
  readonly sql: string;
  /** Each row's object over the level's rows aliased `_t`. */
  readonly row: Projection['row'];
}

/** Whether a level or any level embedded in it has filters. */
const hasFilters = (level: ReadLevel): boolean =>
  level.where.length > 0 || level.embeds.some((e) => hasFilters(e.level));

export class ReadCompiler {
  #aliases = 0;

  constructor(
    readonly params: Params,
    /** The caller's tenant as SQL: the scope CTE, or a parameter for a count estimate. */
    readonly scoped: string,
    /** Where the root level's rows come from when not its table (a function's call). */
    readonly root?: { readonly level: ReadLevel; readonly from: string },
  ) {}

  /** What a level's rows are read from: its table, or the root's source. */
  #source(level: ReadLevel, alias: string): string {
    return `${level === this.root?.level ? this.root.from : ident(level.resource.table)} ${alias}`;
  }

  /** A table alias not used elsewhere in the statement. */
  #fresh(prefix: string): string {
    return `${prefix}${++this.#aliases}`;
  }

  #context(table: string, resource: Resource): LevelContext {
    return {
      params: this.params,
      table,
      scoped: this.scoped,
      exists: (embed) => this.#exists(embed, table, resource),
      embedded: (embed, field) => this.#embeddedValue(embed, field, table, resource),
    };
  }

  /** How an embed's rows are tied to the parent row `parent` of `resource`. */
  #link(embed: PlannedEmbed, parent: string, resource: Resource): Link {
    return { relation: embed.relation, parent, tenanted: resource.tenant !== null };
  }

  /** A field of a to-one embed's row for the parent row `parent`, after the embed's filters (null if none). */
  #embeddedValue(embed: PlannedEmbed, field: Target, parent: string, resource: Resource): string {
    const table = this.#fresh('t');
    const where = this.where(embed.level, table, this.#link(embed, parent, resource));
    return `(SELECT ${target(field, this.params, table)} FROM ${ident(embed.level.resource.table)} ${table}${where})`;
  }

  /** The root level's WHERE, which its count repeats: compiled once, its values bound once. */
  readonly #rootWhere = new Map<ReadLevel, string>();

  /** ` WHERE` of a level over `table` (or nothing): its tenant, its parent, its filters and its `!inner` embeds. */
  where(level: ReadLevel, table: string, link: Link | null = null): string {
    if (link === null) {
      const known = this.#rootWhere.get(level);
      if (known !== undefined) return known;
    }
    const { resource } = level;
    const ctx = this.#context(table, resource);
    const parts = [
      ...(link
        ? [related(link.relation, table, link.parent, link.tenanted, this.scoped)]
        : tenantFilter(resource, table, this.scoped)),
      ...level.where.map((c) => condition(c, ctx)),
      ...level.embeds.filter((e) => e.inner).map((e) => this.#exists(e, table, resource)),
      // An embed that neither shows nor filters (`contact()` without !inner) still has its filters'
      // values checked by PostgreSQL, as everywhere else, in a clause the planner drops.
      ...level.embeds
        .filter((e) => e.show === 'none' && !e.inner && hasFilters(e.level))
        .map((e) => `(true OR ${this.#exists(e, table, resource)})`),
    ];
    const sql = parts.length ? ` WHERE ${parts.join(' AND ')}` : '';
    if (link === null) this.#rootWhere.set(level, sql);
    return sql;
  }

  /** ORDER BY, LIMIT and OFFSET of a level over `table`. */
  #page(level: ReadLevel, table: string): string {
    let sql = orderBy(level.order, this.#context(table, level.resource));
    sql += ` LIMIT ${this.params.add(String(level.limit), 'int8')}`;
    if (level.offset > 0) sql += ` OFFSET ${this.params.add(String(level.offset), 'int8')}`;
    return sql;
  }

  /** Whether an embed has a match for the parent row `parent`, after its own filters and page. */
  #exists(embed: PlannedEmbed, parent: string, resource: Resource): string {
    const { level } = embed;
    const table = this.#fresh('t');
    let sql = `SELECT 1 FROM ${ident(level.resource.table)} ${table}`;
    sql += this.where(level, table, this.#link(embed, parent, resource));
    // Whether a row past the offset exists depends on neither the order nor any limit but 0; without
    // them (and an offset) PostgreSQL can run the EXISTS as a semi-join, not once per parent row.
    if (level.limit === 0) sql += ' LIMIT 0';
    if (level.offset > 0) sql += ` OFFSET ${this.params.add(String(level.offset), 'int8')}`;
    return `EXISTS (${sql})`;
  }

  /** The lateral subquery of a shown embed, one row per parent row (none for a missing to-one). */
  #embed(embed: PlannedEmbed, parent: string, resource: Resource): string {
    const table = this.#fresh('t');
    const node = this.level(embed.level, table, this.#link(embed, parent, resource));
    const many = embed.relation.cardinality === 'many';
    if (embed.show === 'spread') {
      if (!many) return node.sql;
      const arrays = embed.level.columns.map((c) => `json_agg(_t.${ident(c.key)}) AS ${ident(c.key)}`);
      return `SELECT ${arrays.join(', ')} FROM (${node.sql}) _t`;
    }
    const { row } = node;
    const value = row.kind === 'record' ? (many ? 'json_agg(_t)' : 'to_json(_t)') : `(${row.sql})::json`;
    return `SELECT ${many && row.kind === 'text' ? `json_agg(${value})` : value} AS "v" FROM (${node.sql}) _t`;
  }

  /** A column's value over `table`; `lateral` names the subquery of each shown embed. */
  #column(c: ReadColumn, table: string, lateral: ReadonlyMap<PlannedEmbed, string>): string {
    switch (c.kind) {
      case 'field':
        return fieldValue(c, this.params, table);
      case 'aggregate': {
        let value = c.target === null ? '*' : target(c.target, this.params, table);
        if (c.cast) value = `CAST(${value} AS ${c.cast})`;
        const sql = `${AGGREGATE_SQL[c.fn]}(${value})`;
        return c.resultCast ? `CAST(${sql} AS ${c.resultCast})` : sql;
      }
      case 'embed':
      case 'spread': {
        const ref = `${lateral.get(c.embed)}.${c.kind === 'embed' ? '"v"' : ident(c.key)}`;
        return c.embed.relation.cardinality === 'many' ? `coalesce(${ref}, '[]'::json)` : ref;
      }
    }
  }

  /** A field column's value as the text Node writes into its JSON (row-json.ts). */
  #text(c: ReadColumn, table: string, lateral: ReadonlyMap<PlannedEmbed, string>): string {
    if (c.kind !== 'field') throw new Error(`a ${c.kind} column has no text form`);
    const value = this.#column(c, table, lateral);
    return selectedAs(c.target.type) === 'json' ? `to_json(${value})::text` : `(${value})::text`;
  }

  /**
   * A level over `table`: its SELECT, whose rows are the level's objects. `paged`: whether its
   * order, limit and offset apply (a count of groups leaves them out); `csv`: whether custom-field
   * values are wanted as CSV prints them; `written`: the rows a write returned (`source`, already
   * the caller's), with their custom-field values as the write left them.
   */
  level(level: ReadLevel, table: string, link: Link | null, options: LevelOptions = {}): CompiledLevel {
    const { paged = true, csv = false, text = false, written } = options;
    const from = written?.source ?? this.#source(level, table);
    const where = written ? '' : this.where(level, table, link);
    const lateral = new Map<PlannedEmbed, string>();
    let laterals = '';
    for (const embed of level.embeds) {
      if (embed.show === 'none') continue;
      const alias = this.#fresh('e');
      lateral.set(embed, alias);
      laterals += ` LEFT JOIN LATERAL (${this.#embed(embed, table, level.resource)}) ${alias} ON true`;
    }
    // Written rows carry one more column than the table's.
    const list = text
      ? level.columns.map((c, i) => `${this.#text(c, table, lateral)} AS ${rowColumn(i)}`).join(', ')
      : wholeRow(level.resource, level.columns) && !laterals && !written
        ? `${table}.*`
        : level.columns.map((c) => `${this.#column(c, table, lateral)} AS ${ident(c.key)}`).join(', ');
    const keys = level.columns.map((c) => c.key);
    const stored = () =>
      storedCustomFields(level.resource, keys, this.params, { table, scoped: this.scoped, text: csv });
    const p = projection(list, keys, !level.customFields ? null : written ? written.customFields : stored());
    // Written rows come in the request's order, unpaged.
    const page = paged
      ? this.#page(level, table)
      : written
        ? orderBy(level.order, this.#context(table, level.resource))
        : '';
    if (level.grouped) {
      const groups = level.columns.filter((c) => c.kind === 'field' || c.kind === 'spread');
      const groupBy = groups.length ? ` GROUP BY ${groups.map((c) => this.#column(c, table, lateral)).join(', ')}` : '';
      return { sql: `SELECT ${p.select} FROM ${from}${laterals}${where}${groupBy}${page}`, row: p.row };
    }
    // Embeds are built over the page, not over every row the filters let through.
    const rows = laterals ? `(SELECT ${table}.* FROM ${from}${where}${page}) ${table}` : from;
    const tail = laterals ? '' : `${where}${page}`;
    return { sql: `SELECT ${p.select} FROM ${rows}${laterals}${p.join}${tail}`, row: p.row };
  }

  /** The version (compile/version.ts) of the first row of the root level's page: a singular read's ETag. */
  version(level: ReadLevel): string {
    const rows = `SELECT ${version('t')} AS v FROM ${this.#source(level, 't')}${this.where(level, 't')}`;
    return `(SELECT min(v) FROM (${rows}${this.#page(level, 't')}) v)`;
  }

  /** How many rows (or groups) a level's filters let through, up to `upTo` when given. */
  count(level: ReadLevel, upTo: string | null = null): string {
    const from = this.#source(level, 't');
    if (!level.grouped && upTo === null) return `(SELECT count(*) FROM ${from}${this.where(level, 't')})`;
    const rows = level.grouped
      ? this.level(level, 't', null, { paged: false }).sql
      : `SELECT 1 FROM ${from}${this.where(level, 't')}`;
    return `(SELECT count(*) FROM (${rows}${upTo === null ? '' : ` LIMIT ${upTo}`}) c)`;
  }
}
