/**
 * The resources of the customer-engagement API (spec part 4). Each entry is the spec's table in
 * code: its verbs are the spec's operations (plus GET where a comment says why, so what is written
 * can be read back), its `orderable` list exactly the spec's allowed order fields (every resource
 * may also be ordered by its key). The versioned API's
 * collections (`/v1/contacts`) say here what they offer: keyset pages, imports. Adding a resource
 * means adding a table to `tables.ts`, an entry here, and generating a migration
 * (`npm run generate`); the README's "Adding a resource" says more.
 */
import { createRegistry, defineResource, type RegistryOptions, type ResourceDefinition } from '@engage/engine';
import * as t from './tables.ts';

/** Every tenant table has `organisation_id` (docs/contract.md section 9); the built-in tokens name one. */
export const registryOptions = { tenant: 'organisation_id' } as const satisfies RegistryOptions;

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
    imports: { customFields: t.customFields.appointment },
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
    imports: { customFields: t.customFields.deal },
  }),
  defineResource({
    name: 'deal_details',
    table: t.deal,
    description: 'Deals with their custom-field values as extra properties named by custom_field.key.',
    // GET goes beyond the spec's table: what PATCH writes can be read back.
    verbs: ['GET', 'PATCH'],
    orderable: ['lost_at', 'won_at'],
    customFields: t.customFields.deal,
  }),
  defineResource({
    name: 'contact',
    table: t.contact,
    description: 'Contacts.',
    verbs: ['GET'],
    orderable: ['created_at', 'display_name'],
    collection: 'contacts',
    keyset: ['created_at', 'id'],
    imports: { customFields: t.customFields.contact },
  }),
  defineResource({
    name: 'contact_note',
    table: t.contact_note,
    description: 'Notes on contacts.',
    // GET goes beyond the spec's table: a note written can be read back.
    verbs: ['GET', 'POST', 'DELETE'],
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
];

/** The registry of the customer-engagement API. */
export const registry = createRegistry(resources, registryOptions);
