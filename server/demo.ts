/**
 * Demo data: one organisation with a few rows in every resource, so a newcomer can call the API
 * the moment `npm start` finishes: on an empty embedded database (seedDemo), or where `engage seed`
 * finds no demo organisation (createDemo).
 */
import { randomUUID } from 'node:crypto';
import type { Database, Engine, Queryable } from '@engage/engine';

/**
 * Inserts rows given as objects, converted to column types by PostgreSQL from one JSON parameter,
 * and returns their ids. Table and column names must be the caller's own constants.
 */
export async function insertRows(
  db: Queryable,
  table: string,
  organisationId: string,
  rows: Array<Record<string, unknown>>,
): Promise<string[]> {
  const ids: string[] = [];
  for (const row of rows) {
    const columns = ['organisation_id', ...Object.keys(row)].map((c) => `"${c}"`).join(', ');
    const [inserted] = await db.query<{ id: string }>(
      `INSERT INTO "${table}" (${columns})` +
        ` SELECT ${columns} FROM json_populate_record(NULL::"${table}", $1::text::json)` +
        ` RETURNING to_jsonb("${table}".*)->>'id' AS id`,
      [JSON.stringify({ organisation_id: organisationId, ...row })],
    );
    ids.push(inserted!.id);
  }
  return ids;
}

/** The demo organisation's name: how a later start finds it again. */
const DEMO_NAME = 'Demo organisation';

/** The demo organisation, if the database has one (the first created, should there be several). */
export async function findDemo(db: Queryable): Promise<{ id: string; name: string } | null> {
  const [demo] = await db.query<{ id: string; name: string }>(
    'SELECT id::text AS id, name FROM organisation WHERE name = $1::text ORDER BY created_at, id LIMIT 1',
    [DEMO_NAME],
  );
  return demo ?? null;
}

export async function seedDemo(
  db: Database,
  engine: Engine,
): Promise<{ organisationId: string; token: string } | null> {
  const [existing] = await db.query('SELECT 1 FROM organisation LIMIT 1');
  return existing ? null : createDemo(db, engine);
}

/** A new demo organisation, its rows and a token, whatever else the database holds. */
export async function createDemo(db: Database, engine: Engine): Promise<{ organisationId: string; token: string }> {
  const org = randomUUID();
  const id = () => randomUUID();
  const contacts = [id(), id(), id(), id(), id()];
  const appointments = [id(), id(), id()];
  const deals = [id(), id(), id()];
  const fields = { room: id(), duration: id(), source: id() };
  const definition = id();

  await db.transaction(async (tx) => {
    await tx.query('INSERT INTO organisation (id, name) VALUES ($1::uuid, $2::text)', [org, DEMO_NAME]);
    await insertRows(tx, 'segment', org, [
      { name: 'Everyone', is_default: true },
      { name: 'Newsletter readers', is_default: false },
    ]);
    await insertRows(tx, 'calendar', org, [
      { name: 'Front desk', type: 'virtual', external_id: 'cal-1' },
      { name: 'Dr. Meier', type: 'provider', external_id: 'cal-2' },
    ]);
    const people = [
      ['Ada Lovelace', 'ada@example.com', 'Zürich', '1815-12-10'],
      ['Grace Hopper', 'grace@example.com', 'New York', '1906-12-09'],
      ['Alan Turing', 'alan@example.com', 'London', '1912-06-23'],
      ['Edsger Dijkstra', 'edsger@example.com', 'Amsterdam', null],
      ['Barbara Liskov', null, 'Boston', '1939-11-07'],
    ] as const;
    await insertRows(
      tx,
      'contact',
      org,
      people.map(([name, email, city, birthday], i) => ({
        id: contacts[i]!,
        full_name: name,
        display_name: name,
        email,
        city,
        birthday,
        country: i === 0 ? 'CH' : null,
        external_id: `crm-${i + 1}`,
        email_marketing_opt_in: i % 2 === 0,
        email_transactional_opt_in: 'consent_granted',
      })),
    );
    await insertRows(tx, 'contact_note', org, [
      { contact_id: contacts[0]!, text: 'Prefers morning appointments.' },
      { contact_id: contacts[1]!, text: 'Asked for an invoice by email.' },
    ]);
    await insertRows(tx, 'appointment_type', org, [
      { name: 'Consultation', key: 'consultation', emoji: '💬' },
      { name: 'Follow-up', key: 'follow_up', emoji: '🔁' },
    ]);
    await insertRows(
      tx,
      'appointment',
      org,
      appointments.map((appointmentId, i) => ({
        id: appointmentId,
        name: ['Initial consultation', 'Follow-up', 'Annual review'][i]!,
        contact_id: contacts[i]!,
        type_key: i === 0 ? 'consultation' : 'follow_up',
        status_key: i === 2 ? 'cancelled' : 'confirmed',
        start_time: `2026-12-0${i + 1}T09:00:00Z`,
        end_time: `2026-12-0${i + 1}T09:30:00Z`,
        external_id: `apt-${i + 1}`,
      })),
    );
    await insertRows(tx, 'custom_field', org, [
      { id: fields.room, name: 'Room', key: 'room', type: 'string', entity: 'appointment' },
      { id: fields.duration, name: 'Duration (minutes)', key: 'duration', type: 'number', entity: 'appointment' },
      { id: fields.source, name: 'Lead source', key: 'source', type: 'string', entity: 'deal' },
    ]);
    await insertRows(tx, 'appointment_custom_field', org, [
      { appointment_id: appointments[0]!, custom_field_id: fields.room, key: 'room', value: 'A1', string_value: 'A1' },
      {
        appointment_id: appointments[0]!,
        custom_field_id: fields.duration,
        key: 'duration',
        value: '30',
        number_value: 30,
      },
      { appointment_id: appointments[1]!, custom_field_id: fields.room, key: 'room', value: 'B2', string_value: 'B2' },
    ]);
    await insertRows(
      tx,
      'deal',
      org,
      deals.map((dealId, i) => ({
        id: dealId,
        name: ['Website redesign', 'Support contract', 'Training'][i]!,
        contact_id: contacts[i]!,
        value: ['12000.50', '4800', '950'][i]!,
        currency: ['CHF', 'EUR', 'USD'][i]!,
        status_key: ['won', 'open', 'lost'][i]!,
        won_at: i === 0 ? '2026-10-01T12:00:00Z' : null,
        lost_at: i === 2 ? '2026-10-15T12:00:00Z' : null,
      })),
    );
    await insertRows(tx, 'deal_custom_field', org, [
      {
        deal_id: deals[0]!,
        custom_field_id: fields.source,
        key: 'source',
        value: 'referral',
        string_value: 'referral',
      },
    ]);
    await insertRows(tx, 'campaign', org, [{ name: 'Winter newsletter' }, { name: 'Spring promotion' }]);
    await insertRows(tx, 'custom_entity_definition', org, [
      { id: definition, name: 'Pet', key: 'pet', schema: { type: 'object', properties: { name: { type: 'string' } } } },
    ]);
    await insertRows(tx, 'custom_entity', org, [
      {
        custom_entity_definition_id: definition,
        contact_id: contacts[0]!,
        external_id: 'pet-1',
        data: { name: 'Rex' },
      },
    ]);
  });
  const { token } = await engine.tokens!.create(org, { name: 'demo' });
  return { organisationId: org, token };
}
