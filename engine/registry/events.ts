/**
 * Events of writes, declared in the registry: a resource with `events: 'deal'` records
 * `deal.created`, `deal.updated` and `deal.deleted` (those its writes can cause), one per row written,
 * in the engine's outbox (compile/events.ts), for each subscription of the row's tenant that names
 * the event's type. Subscriptions are the rows of a table of the host's (webhook endpoints), named
 * by `RegistryOptions.events`; delivering what the outbox holds is the host's business.
 */
import type { PgTable } from 'drizzle-orm/pg-core';
import type { FieldRule, ResourceDefinition } from './index.ts';
import { readTable } from './table.ts';

export interface EventsDefinition {
  /** The table whose rows subscribe their tenant to event types (webhook endpoints). */
  readonly subscribers: PgTable;
  /** Its `text[]` column of the event types each subscription wants. */
  readonly types: string;
  /** Its boolean column: only subscriptions where it is true get events. */
  readonly enabled?: string;
  /** Event types the host records itself (`engine.events.emit`), besides those of the resources. */
  readonly hostEvents?: readonly string[];
}

/** The subscriptions' table as statements use it. */
export interface Subscribers {
  readonly table: string;
  /** Its tenant column, in a tenanted registry. */
  readonly tenant: string | null;
  /** Its key column (besides the tenant): what an event names its subscription by. */
  readonly key: string;
  readonly types: string;
  readonly enabled: string | null;
}

export interface RegistryEvents {
  readonly subscribers: Subscribers;
  /** Every event type a subscription may name, sorted. */
  readonly types: readonly string[];
}

/** The type a resource's writes record, by what a written row went through; null where no write causes it. */
export interface ResourceEvents {
  readonly created: string | null;
  readonly updated: string | null;
  readonly deleted: string | null;
  readonly subscribers: Subscribers;
}

const refuse = (sentence: string): Error => new Error(`registry: events: ${sentence}`);

/** The event types of a resource's writes: POST and imports create (and upsert), PATCH updates, DELETE deletes. */
function typesOf(def: ResourceDefinition): Omit<ResourceEvents, 'subscribers'> {
  const verbs = new Set(def.verbs);
  const creates = verbs.has('POST') || def.imports !== undefined;
  return {
    created: creates ? `${def.events}.created` : null,
    updated: creates || verbs.has('PATCH') ? `${def.events}.updated` : null,
    deleted: verbs.has('DELETE') ? `${def.events}.deleted` : null,
  };
}

/** The registry's events, checked against the subscriptions' table; null without `events`. */
export function registryEvents(
  options: EventsDefinition | undefined,
  definitions: readonly ResourceDefinition[],
  tenant: string | null,
): RegistryEvents | null {
  if (!options) {
    const eventful = definitions.find((d) => d.events !== undefined);
    if (eventful) throw refuse(`${eventful.name} has events, and the registry names no subscribers; add events: {...}`);
    return null;
  }
  const shape = readTable(options.subscribers);
  const wanted = [options.types, ...(options.enabled ? [options.enabled] : [])];
  const missing = wanted.filter((c) => !shape.columns.has(c));
  if (missing.length > 0) throw refuse(`${shape.name} has no column ${missing.join(', ')}`);
  if (shape.columns.get(options.types)!.sqlType !== 'text[]')
    throw refuse(`${shape.name}.${options.types} must be text[]`);
  const hasTenant = tenant !== null && shape.columns.has(tenant);
  const key = shape.primaryKey.filter((c) => c !== tenant);
  if (key.length !== 1) throw refuse(`${shape.name} must be keyed by one column besides the tenant`);
  const types = new Set(options.hostEvents ?? []);
  for (const def of definitions) {
    if (def.events === undefined) continue;
    for (const type of Object.values(typesOf(def))) if (type) types.add(type);
  }
  return {
    subscribers: {
      table: shape.name,
      tenant: hasTenant ? tenant : null,
      key: key[0]!,
      types: options.types,
      enabled: options.enabled ?? null,
    },
    types: [...types].sort(),
  };
}

/** A resource's events, when it declares them. */
export const resourceEvents = (def: ResourceDefinition, events: RegistryEvents | null): ResourceEvents | null =>
  def.events !== undefined && events ? { ...typesOf(def), subscribers: events.subscribers } : null;

/** The rule of the subscriptions' resource: it names known event types only. */
export function typesRule(events: RegistryEvents): FieldRule {
  const known = new Set(events.types);
  return {
    field: events.subscribers.types,
    allows: (value) => Array.isArray(value) && value.length > 0 && value.every((t) => known.has(t as string)),
    message: `must be a non-empty list of event types: ${events.types.join(', ')}`,
  };
}
