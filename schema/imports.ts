/**
 * What the versioned API's imports write (decisions.md section 8): for each import name, the
 * registry resource whose fields items use, its table, and where its custom-field values go.
 */
import * as t from './tables.ts';

export const imports = {
  contacts: {
    resource: 'contact',
    table: t.contact,
    values: { entity: 'contact', table: t.contact_custom_field, parentKey: 'contact_id' },
  },
  deals: {
    resource: 'deal',
    table: t.deal,
    values: { entity: 'deal', table: t.deal_custom_field, parentKey: 'deal_id' },
  },
  appointments: {
    resource: 'appointment',
    table: t.appointment,
    values: { entity: 'appointment', table: t.appointment_custom_field, parentKey: 'appointment_id' },
  },
} as const;

export type ImportName = keyof typeof imports;
