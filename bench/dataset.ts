/**
 * The benchmark's data, generated inside PostgreSQL with generate_series: organisations of
 * uneven size (one large, one of exactly 5,000 contacts, the rest falling off like Zipf's law),
 * contacts, deals and appointments that reference contacts of their organisation, appointment
 * custom fields with values, and a token for each organisation the scenarios use.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from '@engage/engine';
import { createOrganisationToken, engageEngine } from '../server/engine.ts';

export interface DatasetSize {
  readonly contacts: number;
  readonly deals: number;
  readonly appointments: number;
  readonly organisations: number;
}

export const FULL: DatasetSize = { contacts: 1_000_000, deals: 200_000, appointments: 200_000, organisations: 200 };
export const QUICK: DatasetSize = { contacts: 40_000, deals: 8_000, appointments: 8_000, organisations: 50 };
/** The small database the list and by-id latencies are compared against. */
export const SMALL: DatasetSize = { contacts: 10_000, deals: 2_000, appointments: 2_000, organisations: 20 };

/** How many of the large organisation's contacts the by-id scenario cycles through. */
export const BY_ID_CONTACTS = 2000;
/** Deals the `PATCH deals in turn` scenario cycles through. */
export const PATCHED_DEALS = 2000;

/** How many deals each contact that has deals has (the newest contacts of each organisation have them). */
export const DEALS_PER_CONTACT = 4;

export interface Dataset {
  /** The largest organisation: lists, by-id, details, writes. */
  readonly large: {
    id: string;
    token: string;
    contactIds: readonly string[];
    /** One deal, which every request of `PATCH one deal` writes. */
    dealId: string;
    /** Deals written in turn: writes as a deployment sees them, each row seldom written twice at once. */
    dealIds: readonly string[];
  };
  /** An organisation of exactly 5,000 contacts, for count=exact. */
  readonly counted: { id: string; token: string };
}

export const COUNTED_CONTACTS = 5000;

export async function generate(db: Database, size: DatasetSize, log: (line: string) => void): Promise<Dataset> {
  const large = randomUUID();
  const counted = randomUUID();
  // Shares of the rows: the large organisation a quarter, the counted one fixed, the rest by 1/rank.
  await db.exec(
    `
    CREATE TEMP TABLE bench_org (rank int, id uuid, contacts int, deals int, appointments int);
    INSERT INTO bench_org (rank, id)` +
      ` SELECT g, CASE g WHEN 1 THEN '${large}'::uuid WHEN 2 THEN '${counted}'::uuid ELSE gen_random_uuid() END
      FROM generate_series(1, ${size.organisations}) g;
    WITH w AS (SELECT rank, CASE WHEN rank > 2 THEN 1.0 / (rank - 2) END AS weight FROM bench_org),
         total AS (SELECT sum(weight) AS s FROM w)
    UPDATE bench_org o SET
      contacts = CASE o.rank WHEN 1 THEN ${Math.floor(size.contacts / 4)} WHEN 2 THEN ${COUNTED_CONTACTS}
                 ELSE greatest(1, floor(w.weight / total.s` +
      ` * ${size.contacts - Math.floor(size.contacts / 4) - COUNTED_CONTACTS}))::int END,
      deals = CASE o.rank WHEN 1 THEN ${Math.floor(size.deals / 4)}` +
      ` ELSE greatest(1, floor(coalesce(w.weight / total.s, 0.001) * ${Math.floor((size.deals * 3) / 4)}))::int END,
      appointments = CASE o.rank WHEN 1 THEN ${Math.floor(size.appointments / 4)}` +
      ` ELSE greatest(1, floor(coalesce(w.weight / total.s, 0.001)` +
      ` * ${Math.floor((size.appointments * 3) / 4)}))::int END
    FROM w, total WHERE w.rank = o.rank;
    INSERT INTO organisation (id, name) SELECT id, 'Bench ' || rank FROM bench_org;
  `,
  );
  log('organisations');
  await db.exec(
    `
    INSERT INTO contact (organisation_id, created_at, display_name, full_name, email, city, country,` +
      ` is_blocked, birthday,
                         number_of_marketing_opt_in_requests, email_marketing_opt_in, external_id)
    SELECT o.id, now() - (g || ' minutes')::interval, 'Contact ' || g, 'Full Name ' || g,` +
      ` 'contact' || g || '@example.com',
           (ARRAY['Zürich','Bern','Basel','Genève','Lausanne','Luzern','Lugano','Chur'])[1 + g % 8], 'CH', g % 13 = 0,
           date '1950-01-01' + (g % 20000), g % 5, g % 2 = 0, 'ext-' || g
    FROM bench_org o CROSS JOIN LATERAL generate_series(1, o.contacts) g;
  `,
  );
  log('contacts');
  // Deals and appointments point at contacts of their own organisation, chosen by position. Deals
  // come DEALS_PER_CONTACT to a contact, newest contacts first (`newest`), so the page of
  // `contact?order=created_at.desc` has several deals per contact and every deal has its contact.
  await db.exec(
    `
    CREATE TEMP TABLE bench_contact AS
      SELECT organisation_id, id, row_number() OVER (PARTITION BY organisation_id ORDER BY id) AS n,
             row_number() OVER (PARTITION BY organisation_id ORDER BY created_at DESC, id) AS newest FROM contact;
    CREATE INDEX ON bench_contact (organisation_id, n);
    CREATE INDEX ON bench_contact (organisation_id, newest);
    INSERT INTO deal (organisation_id, contact_id, name, value, currency, status_key, won_at, lost_at, external_id)
    SELECT o.id, c.id, 'Deal ' || g, (g % 1000) * 10.5, (ARRAY['EUR','CHF','USD'])[1 + g % 3],` +
      ` (ARRAY['open','won','lost'])[1 + g % 3],
           CASE WHEN g % 3 = 1 THEN now() - (g || ' hours')::interval END,` +
      ` CASE WHEN g % 3 = 2 THEN now() - (g || ' hours')::interval END, 'deal-' || g
    FROM bench_org o CROSS JOIN LATERAL generate_series(1, o.deals) g
    JOIN bench_contact c ON c.organisation_id = o.id
     AND c.newest = 1 + ((g - 1) / ${DEALS_PER_CONTACT}) % o.contacts;
    INSERT INTO appointment (organisation_id, contact_id, name, status_key, type_key, start_time, end_time, external_id)
    SELECT o.id, c.id, 'Appointment ' || g, 'confirmed', 'consultation', now() + (g || ' hours')::interval,` +
      ` now() + (g || ' hours')::interval + interval '30 minutes', 'apt-' || g
    FROM bench_org o CROSS JOIN LATERAL generate_series(1, o.appointments) g
    JOIN bench_contact c ON c.organisation_id = o.id AND c.n = 1 + g % o.contacts;
  `,
  );
  log('deals and appointments');
  await db.exec(
    `
    INSERT INTO custom_field (organisation_id, name, key, type, entity)
    SELECT o.id, f.name, f.key, f.type, 'appointment' FROM bench_org o
    CROSS JOIN (VALUES ('Room', 'room', 'string'), ('Duration', 'duration', 'number'),` +
      ` ('Tags', 'tags', 'string_list')) f(name, key, type);
    INSERT INTO appointment_custom_field (organisation_id, appointment_id, custom_field_id, key, value,` +
      ` string_value, number_value, string_list_value)
    SELECT a.organisation_id, a.id, f.id, f.key,
           CASE f.key WHEN 'room' THEN 'Room ' || (hashtext(a.id::text) % 20) WHEN 'duration' THEN '30'` +
      ` ELSE '["a","b"]' END,
           CASE WHEN f.key = 'room' THEN 'Room ' || (hashtext(a.id::text) % 20) END,
           CASE WHEN f.key = 'duration' THEN 30 END,
           CASE WHEN f.key = 'tags' THEN ARRAY['a','b'] END
    FROM appointment a JOIN custom_field f ON f.organisation_id = a.organisation_id AND f.entity = 'appointment';
    ANALYZE;
  `,
  );
  log('custom-field values');

  const contacts = await db.query<{ id: string }>(
    `SELECT id::text AS id FROM contact WHERE organisation_id = $1::uuid ORDER BY random() LIMIT ${BY_ID_CONTACTS}`,
    [large],
  );
  const deals = await db.query<{ id: string }>(
    `SELECT id::text AS id FROM deal WHERE organisation_id = $1::uuid ORDER BY id LIMIT ${PATCHED_DEALS}`,
    [large],
  );
  return {
    large: {
      id: large,
      token: (await createOrganisationToken(engageEngine(db), db, { organisationId: large })).token,
      contactIds: contacts.map((c) => c.id),
      dealId: deals[0]!.id,
      dealIds: deals.map((d) => d.id),
    },
    counted: {
      id: counted,
      token: (await createOrganisationToken(engageEngine(db), db, { organisationId: counted })).token,
    },
  };
}
