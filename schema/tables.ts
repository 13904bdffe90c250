/**
 * The physical schema (docs/contract.md section 9): one table per stored resource, named as the
 * resource, columns named as its fields. Every tenant table is keyed by `organisation_id` first,
 * and every foreign key carries `organisation_id` too, so the database itself refuses a reference
 * that crosses organisations. Migrations are generated from this file by drizzle-kit.
 */

import type { CustomFieldsDefinition } from '@engage/engine';
import { CUSTOM_FIELD_TYPE_NAMES } from '@engage/engine';
import { sql } from 'drizzle-orm';
import {
  type AnyPgColumn,
  bigint,
  boolean,
  check,
  date,
  foreignKey,
  index,
  integer,
  jsonb,
  numeric,
  type PgColumnBuilderBase,
  pgTable,
  primaryKey,
  text,
  timestamp,
  unique,
  uuid,
} from 'drizzle-orm/pg-core';

const timestamptz = () => timestamp({ withTimezone: true, mode: 'string' });

export const CALENDAR_TYPES = ['virtual', 'provider'] as const;
export const CURRENCIES = ['EUR', 'CHF', 'USD'] as const;
export const CUSTOM_FIELD_ENTITIES = ['contact', 'deal', 'appointment'] as const;
export const TRANSACTIONAL_OPT_INS = ['legitimate_interest', 'contract_fulfillment', 'consent_granted'] as const;
export const CHANNELS = [
  'whatsapp',
  'sms',
  'email',
  'facebook',
  'instagram',
  'google_business_messaging',
  'postal',
] as const;

/** `col in ('a', 'b')` for a check constraint; the values are our own constants, never input. */
const oneOf = (column: AnyPgColumn, values: readonly string[]) =>
  sql`${column} in (${sql.raw(values.map((v) => `'${v}'`).join(', '))})`;

export const organisation = pgTable('organisation', {
  id: uuid().primaryKey().defaultRandom(),
  name: text(),
  /** Requests per RATE_LIMIT window for each of its tokens, where it differs from RATE_LIMIT's; null: RATE_LIMIT's. */
  rate_limit: integer(),
  created_at: timestamptz().notNull().defaultNow(),
  updated_at: timestamptz().notNull().defaultNow(),
});

/** The fields every resource carries, in the spec's order. */
const common = () => ({
  id: uuid().notNull().defaultRandom(),
  created_at: timestamptz().notNull().defaultNow(),
  updated_at: timestamptz().notNull().defaultNow(),
  organisation_id: uuid()
    .notNull()
    .references(() => organisation.id, { onDelete: 'cascade' }),
});

type TenantColumns = Record<string, PgColumnBuilderBase>;
/** The built columns a constraint callback sees, by name. */
type Columns = Record<string, AnyPgColumn>;
/** A column of a table under construction, by name; a typo fails at start-up, not later. */
const col = (t: Columns, name: string): AnyPgColumn => {
  const column = t[name];
  if (!column) throw new Error(`schema: no column ${name}`);
  return column;
};
type AnyTable = { organisation_id: AnyPgColumn; id: AnyPgColumn };

/** A tenant table: the common fields first, keyed by (organisation_id, id). */
function tenantTable<const C extends TenantColumns>(name: string, columns: C, extra?: (t: Columns) => unknown[]) {
  return pgTable(name, { ...common(), ...columns }, (t: Columns) => [
    primaryKey({ name: `${name}_pkey`, columns: [col(t, 'organisation_id'), col(t, 'id')] }),
    ...((extra ? extra(t) : []) as []),
  ]);
}

/** An index led by organisation_id, as every query of the API filters by it first. */
const orgIndex = (table: string, t: Columns, ...fields: string[]) =>
  index(`${table}_${fields.join('_')}_idx`).on(col(t, 'organisation_id'), ...fields.map((f) => col(t, f)));

const externalIdUnique = (table: string, t: Columns) =>
  unique(`${table}_external_id_key`).on(col(t, 'organisation_id'), col(t, 'external_id'));

/** A foreign key that stays inside the organisation: (organisation_id, column) -> target (organisation_id, id). */
const references = (
  name: string,
  t: Columns,
  column: string,
  target: AnyTable,
  onDelete: 'cascade' | 'no action' = 'no action',
) =>
  foreignKey({
    name,
    columns: [col(t, 'organisation_id'), col(t, column)],
    foreignColumns: [target.organisation_id, target.id],
  }).onDelete(onDelete);

export const segment = tenantTable('segment', {
  name: text(),
  is_default: boolean().default(false),
});

export const calendar = tenantTable(
  'calendar',
  {
    name: text(),
    type: text({ enum: CALENDAR_TYPES }).notNull().default('virtual'),
    external_id: text(),
  },
  (t) => [
    externalIdUnique('calendar', t),
    check('calendar_type_check', oneOf(col(t, 'type'), CALENDAR_TYPES)),
    orgIndex('calendar', t, 'created_at'),
    orgIndex('calendar', t, 'updated_at'),
    orgIndex('calendar', t, 'name'),
  ],
);

const channelOptIns = () => {
  const columns: Record<string, PgColumnBuilderBase> = {};
  for (const channel of CHANNELS) {
    columns[`${channel}_marketing_opt_in`] = boolean();
    columns[`${channel}_transactional_opt_in`] = text({ enum: TRANSACTIONAL_OPT_INS });
  }
  return columns as Record<`${(typeof CHANNELS)[number]}_marketing_opt_in`, ReturnType<typeof boolean>> &
    Record<`${(typeof CHANNELS)[number]}_transactional_opt_in`, ReturnType<typeof text>>;
};

export const contact = tenantTable(
  'contact',
  {
    full_name: text(),
    fts: text(),
    is_blocked: boolean().default(false),
    external_id: text(),
    secondary_external_id: text(),
    birthday: date({ mode: 'string' }),
    salutation: text(),
    email: text(),
    sms: text(),
    whatsapp: text(),
    instagram: text(),
    facebook: text(),
    google_business_messaging: text(),
    postal: text(),
    display_name: text(),
    address_line1: text(),
    address_line2: text(),
    city: text(),
    zipcode: text(),
    country: text(),
    number_of_marketing_opt_in_requests: integer().default(0),
    latest_marketing_opt_in_request_sent_at: timestamptz(),
    campaign_messages_this_month: integer().default(0),
    ...channelOptIns(),
  },
  (t) => [
    externalIdUnique('contact', t),
    ...CHANNELS.map((channel) =>
      check(
        `contact_${channel}_transactional_opt_in_check`,
        oneOf(col(t, `${channel}_transactional_opt_in`), TRANSACTIONAL_OPT_INS),
      ),
    ),
    orgIndex('contact', t, 'created_at', 'id'),
    orgIndex('contact', t, 'display_name'),
    orgIndex('contact', t, 'email'),
  ],
);

export const appointment_type = tenantTable(
  'appointment_type',
  {
    name: text(),
    key: text(),
    emoji: text(),
    description: text(),
    external_id: text(),
  },
  (t) => [
    externalIdUnique('appointment_type', t),
    unique('appointment_type_key_key').on(col(t, 'organisation_id'), col(t, 'key')),
  ],
);

export const appointment = tenantTable(
  'appointment',
  {
    name: text(),
    description: text(),
    external_id: text(),
    status_key: text(),
    type_key: text(),
    assignee_id: uuid(),
    contact_id: uuid(),
    start_time: timestamptz(),
    end_time: timestamptz(),
    confirmed_at: timestamptz(),
    cancelled_at: timestamptz(),
    location_id: uuid(),
  },
  (t) => [
    externalIdUnique('appointment', t),
    references('appointment_contact_fkey', t, 'contact_id', contact),
    orgIndex('appointment', t, 'start_time'),
    orgIndex('appointment', t, 'contact_id'),
  ],
);

export const deal = tenantTable(
  'deal',
  {
    contact_id: uuid(),
    name: text(),
    external_id: text(),
    type_key: text(),
    status_key: text(),
    assignee_id: uuid(),
    value: numeric(),
    currency: text({ enum: CURRENCIES }),
    won_at: timestamptz(),
    lost_at: timestamptz(),
  },
  (t) => [
    externalIdUnique('deal', t),
    check('deal_currency_check', oneOf(col(t, 'currency'), CURRENCIES)),
    references('deal_contact_fkey', t, 'contact_id', contact),
    orgIndex('deal', t, 'won_at'),
    orgIndex('deal', t, 'lost_at'),
    orgIndex('deal', t, 'contact_id'),
  ],
);

export const contact_note = tenantTable(
  'contact_note',
  {
    contact_id: uuid(),
    text: text(),
    created_by_id: uuid(),
  },
  (t) => [
    references('contact_note_contact_fkey', t, 'contact_id', contact, 'cascade'),
    orgIndex('contact_note', t, 'contact_id'),
  ],
);

export const campaign = tenantTable('campaign', { name: text() });

export const custom_field = tenantTable(
  'custom_field',
  {
    name: text(),
    description: text(),
    type: text({ enum: CUSTOM_FIELD_TYPE_NAMES }).notNull(),
    key: text().notNull(),
    entity: text({ enum: CUSTOM_FIELD_ENTITIES }).notNull(),
  },
  (t) => [
    unique('custom_field_entity_key_key').on(col(t, 'organisation_id'), col(t, 'entity'), col(t, 'key')),
    check('custom_field_type_check', oneOf(col(t, 'type'), CUSTOM_FIELD_TYPE_NAMES)),
    check('custom_field_entity_check', oneOf(col(t, 'entity'), CUSTOM_FIELD_ENTITIES)),
  ],
);

/** A custom-field value table: one row per (record, custom field), the value in its typed column. */
function customFieldValues<const K extends string>(name: string, parentKey: K, parent: AnyTable) {
  return pgTable(
    name,
    {
      [parentKey]: uuid().notNull(),
      custom_field_id: uuid().notNull(),
      created_at: timestamptz().notNull().defaultNow(),
      updated_at: timestamptz().notNull().defaultNow(),
      organisation_id: uuid()
        .notNull()
        .references(() => organisation.id, { onDelete: 'cascade' }),
      key: text(),
      value: text(),
      date_value: date({ mode: 'string' }),
      string_value: text(),
      number_value: numeric(),
      boolean_value: boolean(),
      datetime_value: timestamptz(),
      string_list_value: text().array(),
    } as Record<K | 'custom_field_id' | 'organisation_id', ReturnType<typeof uuid>> &
      Record<string, PgColumnBuilderBase>,
    (t: Columns) => [
      primaryKey({
        name: `${name}_pkey`,
        columns: [col(t, 'organisation_id'), col(t, parentKey), col(t, 'custom_field_id')],
      }),
      references(`${name}_parent_fkey`, t, parentKey, parent, 'cascade'),
      references(`${name}_custom_field_fkey`, t, 'custom_field_id', custom_field, 'cascade'),
      index(`${name}_custom_field_idx`).on(col(t, 'organisation_id'), col(t, 'custom_field_id')),
    ],
  );
}

export const appointment_custom_field = customFieldValues('appointment_custom_field', 'appointment_id', appointment);
export const deal_custom_field = customFieldValues('deal_custom_field', 'deal_id', deal);
export const contact_custom_field = customFieldValues('contact_custom_field', 'contact_id', contact);

/** Each entity's custom fields: where their values are kept (for the registry's `customFields` and `imports`). */
export const customFields = {
  contact: { entity: 'contact', values: contact_custom_field, parentKey: 'contact_id', definitions: custom_field },
  deal: { entity: 'deal', values: deal_custom_field, parentKey: 'deal_id', definitions: custom_field },
  appointment: {
    entity: 'appointment',
    values: appointment_custom_field,
    parentKey: 'appointment_id',
    definitions: custom_field,
  },
} as const satisfies Record<(typeof CUSTOM_FIELD_ENTITIES)[number], CustomFieldsDefinition>;

export const custom_entity_definition = tenantTable(
  'custom_entity_definition',
  {
    name: text(),
    key: text(),
    /** JSON Schema that every custom_entity.data of this definition must match. */
    schema: jsonb().notNull().default({}),
  },
  (t) => [unique('custom_entity_definition_key_key').on(col(t, 'organisation_id'), col(t, 'key'))],
);

export const custom_entity = tenantTable(
  'custom_entity',
  {
    custom_entity_definition_id: uuid(),
    contact_id: uuid(),
    external_id: text(),
    data: jsonb(),
  },
  (t) => [
    externalIdUnique('custom_entity', t),
    references('custom_entity_definition_fkey', t, 'custom_entity_definition_id', custom_entity_definition),
    references('custom_entity_contact_fkey', t, 'contact_id', contact, 'cascade'),
    orgIndex('custom_entity', t, 'contact_id'),
  ],
);

/** The versioned API's collections with imports (the registry's `collection` of each importable resource). */
export const IMPORT_RESOURCES = ['contacts', 'deals', 'appointments'] as const;
export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;

/** An uploaded import file (CSV or JSON), stored in the database so any server process can read it. */
export const file = tenantTable('file', {
  content_type: text().notNull(),
  size: bigint({ mode: 'number' }).notNull().default(0),
  sha256: text(),
});

/** A file's text, in pieces of about 1 MiB, in upload order. */
export const file_chunk = pgTable(
  'file_chunk',
  {
    organisation_id: uuid().notNull(),
    file_id: uuid().notNull(),
    seq: integer().notNull(),
    data: text().notNull(),
  },
  (t) => [
    primaryKey({ name: 'file_chunk_pkey', columns: [t.organisation_id, t.file_id, t.seq] }),
    foreignKey({
      name: 'file_chunk_file_fkey',
      columns: [t.organisation_id, t.file_id],
      foreignColumns: [file.organisation_id, file.id],
    }).onDelete('cascade'),
  ],
);

/** An import of a file, claimed by one server process at a time and resumable after a crash. */
export const import_job = tenantTable(
  'import_job',
  {
    resource: text({ enum: IMPORT_RESOURCES }).notNull(),
    file_id: uuid().notNull(),
    status: text({ enum: JOB_STATUSES }).notNull().default('queued'),
    /** Items of the file already written; a resumed job skips them. */
    processed: integer().notNull().default(0),
    created: integer().notNull().default(0),
    updated: integer().notNull().default(0),
    failed: integer().notNull().default(0),
    /** The first errors, by item index. */
    errors: jsonb().notNull().default([]),
    error: text(),
    locked_at: timestamptz(),
    finished_at: timestamptz(),
  },
  (t) => [
    references('import_job_file_fkey', t, 'file_id', file, 'cascade'),
    check('import_job_status_check', oneOf(col(t, 'status'), JOB_STATUSES)),
    check('import_job_resource_check', oneOf(col(t, 'resource'), IMPORT_RESOURCES)),
    index('import_job_queue_idx').on(col(t, 'status'), col(t, 'created_at')),
  ],
);

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

/**
 * A tenant's webhook endpoint: where the events it names are posted, signed with its secret
 * (Standard Webhooks' `whsec_` and 32 random bytes in base64), which only its create shows.
 */
export const webhook_endpoint = tenantTable(
  'webhook_endpoint',
  {
    url: text().notNull(),
    events: text().array().notNull(),
    enabled: boolean().notNull().default(true),
    description: text(),
    secret: text()
      .notNull()
      .default(
        sql`'whsec_' || encode(decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'), 'base64')`,
      ),
    /** Why the server turned it off (deliveries failing for about a day); null while it is on or turned off by hand. */
    disabled_reason: text(),
  },
  (t) => [orgIndex('webhook_endpoint', t, 'created_at')],
);

/** An event on its way to one endpoint: retried with backoff until it is accepted or about a day has passed. */
export const webhook_delivery = tenantTable(
  'webhook_delivery',
  {
    endpoint_id: uuid().notNull(),
    type: text().notNull(),
    /** The body posted: `{"type": ..., "timestamp": ..., "data": {...}}`. */
    payload: text().notNull(),
    status: text({ enum: DELIVERY_STATUSES }).notNull().default('pending'),
    attempts: integer().notNull().default(0),
    next_attempt_at: timestamptz().notNull().defaultNow(),
    /** Until when a server process holds it, posting it. */
    locked_until: timestamptz(),
    delivered_at: timestamptz(),
  },
  (t) => [
    references('webhook_delivery_endpoint_fkey', t, 'endpoint_id', webhook_endpoint, 'cascade'),
    check('webhook_delivery_status_check', oneOf(col(t, 'status'), DELIVERY_STATUSES)),
    orgIndex('webhook_delivery', t, 'endpoint_id', 'created_at'),
    // The worker's queue, across organisations. Partial, so no statement of the API (whose status is a
    // parameter) can read it in place of an index led by organisation_id.
    index('webhook_delivery_due_idx').on(col(t, 'next_attempt_at')).where(sql`status = 'pending'`),
  ],
);

/** One try at posting a delivery: the endpoint's status code, or why there was none. */
export const webhook_attempt = tenantTable(
  'webhook_attempt',
  {
    delivery_id: uuid().notNull(),
    status_code: integer(),
    error: text(),
    duration_ms: integer().notNull(),
  },
  (t) => [
    references('webhook_attempt_delivery_fkey', t, 'delivery_id', webhook_delivery, 'cascade'),
    orgIndex('webhook_attempt', t, 'delivery_id'),
  ],
);
