/**
 * Batch imports of a collection: items matched on the field `imports.key` names (external_id) within
 * the tenant (updated) or
 * created, with custom-field values by key. Items are checked one by one (plan/import.ts); valid
 * items are written even when others fail, and each gets a result. The statements
 * (compile/import.ts) are set-based, a handful per slice of the batch whatever its size, run
 * through the caller's transaction.
 */
import { randomUUID } from 'node:crypto';
import { setImmediate } from 'node:timers/promises';
import {
  type CustomValue,
  customFieldsOf,
  freshKeys,
  type ImportScope,
  insertRows,
  type LookUp,
  lookUp,
  updateRows,
  writeCustomValues,
} from '../compile/import.ts';
import type { CompiledStatement } from '../compile/sql.ts';
import { CUSTOM_FIELD_TYPES, type CustomField } from '../custom-fields.ts';
import type { Queryable, Row } from '../db/port.ts';
import { type ColumnType, KINDS } from '../field-kinds.ts';
import { type Accepted, type BatchResult, batchChecker, failure, type ItemResult, inYour } from '../plan/import.ts';
import type { Resource } from '../registry/index.ts';
import type { Context } from './context.ts';

/** What a host's import feature uses of the engine: one per collection with imports. */
export interface Importer {
  readonly collection: string;
  readonly resource: Resource;
  /**
   * Imports items for a tenant (null in a single-tenant registry) through `q`, inside the caller's
   * transaction. `offset` is the index of the first item, for a file read in pieces.
   */
  write(q: Queryable, tenant: string | null, items: readonly unknown[], offset?: number): Promise<BatchResult>;
  /**
   * What a CSV record (header -> cell text) becomes: an item with each cell the JSON value its field
   * or the tenant's custom field takes; empty cells are left out.
   */
  csv(q: Queryable, tenant: string | null): Promise<(record: Readonly<Record<string, string>>) => Row>;
}

/**
 * Items per slice of a batch. Each slice costs a few statements; slices let Node check one while
 * the database writes another (docs/performance.md).
 */
const SLICE = 5_000;

const run = async <T extends Row>(q: Queryable, s: CompiledStatement) => q.query<T>(s.text, s.params);

/** A key's text as the database compares it (a uuid in any case is one value). */
const folded = (type: ColumnType, value: string) => KINDS[type.kind].canonical?.(value) ?? value;

/** An item's value of `field` as text (a number's too), or undefined when it gives none. */
const givenText = (a: Accepted, field: string) => {
  const value = a.row[field];
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
};

/** Distinct values of `field` among the rows, as text. */
const valuesOf = (rows: readonly Accepted[], field: string) => [
  ...new Set(rows.map((a) => givenText(a, field)).filter((v): v is string => v !== undefined)),
];

export function importers(ctx: Context): ReadonlyMap<string, Importer> {
  const { tenant: tenancy } = ctx.registry;
  return new Map(
    ctx.registry.resources.flatMap((resource) =>
      resource.imports && resource.collection
        ? [[resource.collection, importer(resource, resource.collection)] as const]
        : [],
    ),
  );

  function importer(resource: Resource, collection: string): Importer {
    const key = resource.key[0]!;
    // The field items are matched on: a match updates its record.
    const { key: match, customFields: custom } = resource.imports!;
    const tenantColumn = resource.tenant?.name ?? null;
    const byMatch: LookUp = {
      table: resource.table,
      tenant: tenantColumn,
      column: match.name,
      type: match.type,
      answer: key.name,
    };
    const byKey: LookUp = { ...byMatch, column: key.name, type: key.type };
    const references = resource.references
      .filter((r) => r.fields.length === 1)
      .map((r) => ({
        field: r.fields[0]!,
        spec: {
          table: r.table,
          tenant: r.targetTenanted ? tenancy!.column : null,
          column: r.targetFields[0]!,
          type: resource.field(r.fields[0]!)!.type,
          answer: r.targetFields[0]!,
        } satisfies LookUp,
      }));

    // A resource referring to its own table has one slice, so its references never name records
    // of the same batch.
    const sliceSize = references.some((r) => r.spec.table === resource.table) ? Number.POSITIVE_INFINITY : SLICE;

    async function customFields(q: Queryable, scope: ImportScope): Promise<Map<string, CustomField>> {
      if (!custom) return new Map();
      const rows = await run<{ id: string; key: string; type: CustomField['type'] }>(q, customFieldsOf(custom, scope));
      return new Map(rows.map((f) => [f.key, f]));
    }

    async function found(q: Queryable, spec: LookUp, values: string[], scope: ImportScope) {
      if (values.length === 0) return new Map<string, string>();
      const rows = await run<{ value: string; answer: string }>(q, lookUp(spec, values, scope));
      return new Map(rows.map((r) => [r.value, r.answer]));
    }

    /** Keys for new rows that give none: uuids made here, other kinds from the column's default. */
    async function newKeys(q: Queryable, count: number): Promise<string[]> {
      if (count === 0) return [];
      if (key.kind === 'uuid') return Array.from({ length: count }, () => randomUUID());
      if (key.defaultSql === undefined) throw new Error(`engine: ${resource.name}.${key.name} has no default`);
      return (await run<{ key: string }>(q, freshKeys(key, count))).map((r) => r.key);
    }

    /** A slice's items sorted by what they become, with the key of each. */
    interface Prepared {
      readonly toCreate: Accepted[];
      readonly toUpdate: Accepted[];
      readonly keys: Map<Accepted, string>;
    }

    /**
     * A slice's look-ups: references must name records the tenant can see, a matched item updates
     * its record, a given key must not be taken. Refused items get their result in `results`.
     */
    async function prepare(q: Queryable, scope: ImportScope, accepted: Accepted[], results: ItemResult[]) {
      const where = inYour(tenancy);
      const refuse = (result: ItemResult) => {
        results.push(result);
        return false;
      };
      for (const { field, spec } of references) {
        const known = await found(q, spec, valuesOf(accepted, field), scope);
        accepted = accepted.filter((a) => {
          const value = a.row[field];
          if (typeof value !== 'string' || known.has(folded(spec.type, value))) return true;
          return refuse(
            failure(a.index, 'REFERENCE_NOT_FOUND', `the record that ${field} points to does not exist${where}`, {
              fields: [field],
            }),
          );
        });
      }
      const existing = await found(q, byMatch, valuesOf(accepted, match.name), scope);
      const matched = (a: Accepted) => matchedKey(a, existing) !== undefined;
      const toUpdate = accepted.filter(matched);
      let toCreate = accepted.filter((a) => !matched(a));
      const taken = await found(q, byKey, valuesOf(toCreate, key.name), scope);
      toCreate = toCreate.filter((a) => {
        const given = a.row[key.name];
        if (typeof given !== 'string' || !taken.has(folded(key.type, given))) return true;
        return refuse(
          failure(a.index, 'CONFLICT', `a record with this ${key.name} already exists${where}`, {
            fields: [key.name],
          }),
        );
      });
      const keys = new Map<Accepted, string>();
      const fresh = await newKeys(q, toCreate.filter((a) => a.row[key.name] === undefined).length);
      for (const a of toCreate) keys.set(a, a.row[key.name] === undefined ? fresh.pop()! : String(a.row[key.name]));
      for (const a of toUpdate) keys.set(a, matchedKey(a, existing)!);
      return { toCreate, toUpdate, keys } satisfies Prepared;
    }

    /** The record an item's matched value names, by the look-up's answers. */
    function matchedKey(a: Accepted, found: ReadonlyMap<string, string>) {
      const value = givenText(a, match.name);
      return value === undefined ? undefined : found.get(folded(match.type, value));
    }

    /** Writes a prepared slice, adding a result for each of its items to `results`. */
    async function store(q: Queryable, scope: ImportScope, slice: Prepared, results: ItemResult[]) {
      const { toUpdate, keys } = slice;
      let { toCreate } = slice;
      // Each row with its key; the row is the checks' own object, not the caller's item.
      const withKey = (a: Accepted): Row => {
        a.row[key.name] = keys.get(a);
        return a.row;
      };
      // A concurrent import may have created a matched value since the look-up: those become updates.
      if (toCreate.length > 0) {
        const inserted = new Set(
          (await run<{ key: string }>(q, insertRows(resource, toCreate.map(withKey), scope))).map((r) => r.key),
        );
        const won = (a: Accepted) => inserted.has(folded(key.type, keys.get(a)!));
        const raced = toCreate.filter((a) => !won(a));
        if (raced.length > 0) {
          toCreate = toCreate.filter(won);
          const now = await found(q, byMatch, valuesOf(raced, match.name), scope);
          for (const a of raced) keys.set(a, matchedKey(a, now)!);
          toUpdate.push(...raced);
        }
      }
      if (toUpdate.length > 0) await run(q, updateRows(resource, toUpdate.map(withKey), scope));
      const values: CustomValue[] = [...toCreate, ...toUpdate].flatMap((a) =>
        a.custom.map(([field, value]) => ({ parent: keys.get(a)!, field, value })),
      );
      if (values.length > 0 && custom) await run(q, writeCustomValues(resource, custom, values, scope));
      for (const a of toCreate) results.push({ index: a.index, status: 'created', id: keys.get(a)! });
      for (const a of toUpdate) results.push({ index: a.index, status: 'updated', id: keys.get(a)! });
    }

    return {
      collection,
      resource,

      async write(q, tenant, items, offset = 0) {
        const scope: ImportScope = { tenancy, tenant };
        const check = batchChecker({
          resource,
          schemas: ctx.schemas(resource),
          tenancy,
          tenant,
          customFields: await customFields(q, scope),
        });
        const results: ItemResult[] = [];
        // Slices pipelined: Node checks slices while the database writes those before them; each
        // slice's statements go out after the next slice's look-ups, and without waiting for the
        // slice before them to be answered (the connection runs them in order), so the database
        // need not wait for Node between two slices. No slice can see another's rows: a matched
        // value or key appears once per batch.
        // Failures in the order they happen: statements after the first fail only because it did.
        const failures: unknown[] = [];
        const storeOf = (slice: Promise<Prepared | null>) =>
          slice
            .then(async (prepared) => {
              if (prepared) await store(q, scope, prepared, results);
            })
            .catch((error: unknown) => {
              failures.push(error);
            });
        let last: Promise<Prepared | null> = Promise.resolve(null);
        const stores: Promise<void>[] = [];
        for (let start = 0; start < items.length; start += sliceSize) {
          const { accepted, results: refused } = check(items.slice(start, start + sliceSize), offset + start);
          results.push(...refused);
          const next = last.then(() => prepare(q, scope, accepted, results));
          // Stored (and its failure caught) in the next turn; until then not an unhandled rejection.
          next.catch(() => {});
          stores.push(storeOf(last));
          last = next;
          await setImmediate();
        }
        stores.push(storeOf(last));
        // Every slice settles first: none may go on using the transaction once the caller ends it.
        await Promise.all(stores);
        if (failures.length > 0) throw failures[0];
        results.sort((x, y) => x.index - y.index);
        const count = (status: ItemResult['status']) => results.filter((r) => r.status === status).length;
        return { created: count('created'), updated: count('updated'), failed: count('failed'), results };
      },

      async csv(q, tenant) {
        const fields = await customFields(q, { tenancy, tenant });
        const kindOf = (name: string) => {
          const type = fields.get(name)?.type;
          return resource.field(name)?.kind ?? (type && CUSTOM_FIELD_TYPES[type].kind);
        };
        return (record) => {
          const item: Row = {};
          for (const [name, cell] of Object.entries(record)) {
            if (cell === '') continue;
            const kind = kindOf(name);
            item[name] = kind ? KINDS[kind].fromCsv(cell) : cell;
          }
          return item;
        };
      },
    };
  }
}
