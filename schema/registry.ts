/**
 * The resources of the customer-engagement API (spec part 4). Each entry is the spec's table in
 * code: its verbs are the spec's operations (plus GET where a comment says why, so what is written
 * can be read back), its `orderable` list exactly the spec's allowed order fields (every resource
 * may also be ordered by its key). The versioned API's
 * collections (`/v1/contacts`) say here what they offer: keyset pages, imports. Adding a resource
 * means adding a table to `tables.ts`, an entry here, and generating a migration
 * (`npm run generate -- --name <name>`); docs/adding-a-resource.md walks through it.
 */
import { createRegistry, defineResource, type RegistryOptions, type ResourceDefinition } from '@engage/engine';
import * as t from './tables.ts';

/**
 * Every tenant table has `organisation_id` (docs/contract.md section 9); the built-in tokens name one.
 * Writes of resources with `events` record them for the organisation's webhook endpoints that name
 * them (the webhooks module delivers them), as do finished import jobs.
 */
export const registryOptions = {
  tenant: 'organisation_id',
  events: {
    subscribers: t.webhook_endpoint,
    types: 'events',
    enabled: 'enabled',
    hostEvents: ['import.succeeded', 'import.failed'],
  },
  // Every resource served with GET is also a stream of its changes (docs/streams.md), whoever
  // writes them: the API, imports, another program.
  changes: true,
} as const satisfies RegistryOptions;

/** A URL webhooks can be posted to: absolute http or https, at most 2,048 characters. */
const isWebhookUrl = (value: unknown) => {
  if (typeof value !== 'string' || value.length > 2048 || !URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '';
};

export const resources: readonly ResourceDefinition[] = [
  defineResource({
    name: 'segment',
    table: t.segment,
    description: 'Segments of contacts.',
    verbs: ['GET'],
  }),
  defineResource({
    name: 'appointment',
    table: t.appointment,
    description: 'Appointments.',
    verbs: ['GET'],
    orderable: ['start_time'],
    collection: 'appointments',
    imports: { key: ['external_id'], customFields: t.customFields.appointment },
    events: 'appointment',
  }),
  defineResource({
    name: 'appointment_details',
    table: t.appointment,
    description: 'Appointments with their custom-field values as extra properties named by custom_field.key.',
    verbs: ['GET'],
    orderable: ['start_time'],
    customFields: t.customFields.appointment,
  }),
  defineResource({
    name: 'appointment_type',
    table: t.appointment_type,
    description: 'Types of appointment.',
    verbs: ['POST', 'PATCH'],
  }),
  defineResource({
    name: 'appointment_custom_field',
    table: t.appointment_custom_field,
    description: 'Values of custom fields on appointments.',
    verbs: ['GET'],
  }),
  defineResource({
    name: 'calendar',
    table: t.calendar,
    description: 'Calendars. Only virtual calendars can be created through the API.',
    verbs: ['GET', 'POST', 'PATCH', 'DELETE'],
    orderable: ['created_at', 'updated_at', 'name'],
    events: 'calendar',
    rules: [
      {
        field: 'type',
        allows: (type) => type === 'virtual',
        message: 'must be virtual: only virtual calendars can be created through the API',
      },
    ],
  }),
  defineResource({
    name: 'deal',
    table: t.deal,
    description: 'Deals.',
    verbs: ['GET', 'POST', 'PATCH', 'DELETE'],
    orderable: ['lost_at', 'won_at'],
    collection: 'deals',
    imports: { key: ['external_id'], customFields: t.customFields.deal },
    events: 'deal',
  }),
  defineResource({
    name: 'deal_details',
    table: t.deal,
    description: 'Deals with their custom-field values as extra properties named by custom_field.key.',
    // GET goes beyond the spec's table: what PATCH writes can be read back.
    verbs: ['GET', 'PATCH'],
    orderable: ['lost_at', 'won_at'],
    customFields: t.customFields.deal,
    events: 'deal',
  }),
  defineResource({
    name: 'contact',
    table: t.contact,
    description: 'Contacts.',
    verbs: ['GET'],
    orderable: ['created_at', 'display_name'],
    collection: 'contacts',
    keyset: ['created_at', 'id'],
    imports: { key: ['external_id'], customFields: t.customFields.contact },
    events: 'contact',
  }),
  defineResource({
    name: 'contact_note',
    table: t.contact_note,
    description: 'Notes on contacts.',
    // GET goes beyond the spec's table: a note written can be read back.
    verbs: ['GET', 'POST', 'DELETE'],
    events: 'contact_note',
  }),
  defineResource({
    name: 'campaign',
    table: t.campaign,
    description: 'Campaigns.',
    verbs: ['GET'],
  }),
  defineResource({
    name: 'custom_field',
    table: t.custom_field,
    description: 'Custom fields of contacts, deals and appointments.',
    // GET goes beyond the spec's table: it tells the keys `*_details` and imports take.
    verbs: ['GET', 'DELETE'],
  }),
  defineResource({
    name: 'custom_entity',
    table: t.custom_entity,
    description: 'Custom entities; data matches the JSON Schema of their definition.',
    // GET goes beyond the spec's table.
    verbs: ['GET', 'DELETE'],
  }),
  // Beyond the spec: webhooks (docs/webhooks.md).
  defineResource({
    name: 'webhook_endpoint',
    table: t.webhook_endpoint,
    description:
      'Where the events named in `events` are posted, signed (Standard Webhooks) with `secret`, which only ' +
      'the create shows (with `Prefer: return=representation`).',
    verbs: ['GET', 'POST', 'PATCH', 'DELETE'],
    orderable: ['created_at'],
    shownOnce: ['secret'],
    serverManaged: ['organisation_id', 'id', 'created_at', 'updated_at', 'disabled_reason'],
    rules: [
      { field: 'url', allows: isWebhookUrl, message: 'must be an absolute http or https URL without credentials' },
    ],
  }),
  defineResource({
    name: 'webhook_delivery',
    table: t.webhook_delivery,
    description: 'Events on their way to webhook endpoints; `webhook_attempt(*)` embeds the tries.',
    verbs: ['GET'],
    orderable: ['created_at', 'next_attempt_at'],
  }),
  defineResource({
    name: 'webhook_attempt',
    table: t.webhook_attempt,
    description: 'Each try at posting a webhook delivery.',
    verbs: ['GET'],
    orderable: ['created_at'],
  }),
];

/** The registry of the customer-engagement API. */
export const registry = createRegistry(resources, registryOptions);
