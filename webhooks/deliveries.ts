/**
 * Webhook deliveries: rows of `webhook_delivery`, made from the engine's outbox (one per event and
 * endpoint), claimed by one server process at a time with `FOR UPDATE SKIP LOCKED`, posted, and
 * retried with backoff until accepted or out of retries. Every try is a row of `webhook_attempt`;
 * an endpoint whose delivery runs out of retries is turned off.
 */
import type { Database, Engine, Queryable } from '@engage/engine';
import { type Outcome, type PostOptions, post } from './poster.ts';
import { signedHeaders } from './sign.ts';

/** Events moved from the outbox, and deliveries posted, per round. */
const MOVE_BATCH = 500;
const POST_BATCH = 10;

/** The waits before each retry, in seconds: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (about a day in all). */
export const RETRY_SECONDS = [5, 300, 1800, 7200, 18_000, 36_000, 36_000] as const;

export interface DeliveryOptions extends PostOptions {
  readonly retrySeconds: readonly number[];
}

interface Claimed extends Record<string, unknown> {
  organisation_id: string;
  id: string;
  payload: string;
  attempts: number;
  url: string;
  secret: string;
  enabled: boolean;
}

/** Moves a batch of events from the outbox into deliveries, in one transaction; how many it moved. */
async function moveEvents(db: Database, engine: Engine): Promise<number> {
  const outbox = engine.events;
  if (!outbox) return 0;
  return db.transaction(async (tx) => {
    const events = await outbox.take(tx, MOVE_BATCH);
    if (events.length === 0) return 0;
    // An endpoint deleted since its event was recorded gets nothing.
    await tx.query(
      'INSERT INTO "webhook_delivery" ("organisation_id", "id", "endpoint_id", "type", "payload")' +
        ` SELECT e."tenant"::uuid, e."id"::uuid, e."subscriber"::uuid, e."type",` +
        ` json_build_object('type', e."type", 'timestamp', e."created_at", 'data', e."data"::json)::text` +
        ' FROM json_to_recordset($1::text::json) AS e("tenant" text, "id" text, "subscriber" text, "type" text,' +
        ' "data" text, "created_at" text)' +
        ' WHERE EXISTS (SELECT FROM "webhook_endpoint" w' +
        ' WHERE w."organisation_id" = e."tenant"::uuid AND w."id" = e."subscriber"::uuid)',
      [JSON.stringify(events)],
    );
    return events.length;
  });
}

/** Claims deliveries that are due, across organisations, holding each for `holdSeconds`. */
async function claim(db: Database, holdSeconds: number): Promise<Claimed[]> {
  return db.query<Claimed>(
    'UPDATE "webhook_delivery" d SET "locked_until" = now() + make_interval(secs => $2::text::int4)' +
      ' FROM (SELECT "organisation_id", "id" FROM "webhook_delivery"' +
      ` WHERE "status" = 'pending' AND "next_attempt_at" <= now() AND ("locked_until" IS NULL OR "locked_until" < now())` +
      ' ORDER BY "next_attempt_at" LIMIT $1::text::int4 FOR UPDATE SKIP LOCKED) n, "webhook_endpoint" e' +
      ' WHERE d."organisation_id" = n."organisation_id" AND d."id" = n."id"' +
      ' AND e."organisation_id" = d."organisation_id" AND e."id" = d."endpoint_id"' +
      ' RETURNING d."organisation_id"::text AS organisation_id, d."id"::text AS id, d."payload", d."attempts",' +
      ' e."url", e."secret", e."enabled"',
    [String(POST_BATCH), String(holdSeconds)],
  );
}

/** A post and how long it took. */
type Tried = Outcome & { readonly ms: number };

/**
 * Records a try and what follows from it, in one statement: the delivery succeeded, waits for its
 * next try, or failed for good, which turns its endpoint off. A disabled endpoint's delivery fails
 * without a try (`tried` null).
 */
async function record(q: Queryable, delivery: Claimed, tried: Tried | null, options: DeliveryOptions) {
  const ok = tried !== null && tried.status !== null && tried.status >= 200 && tried.status < 300;
  const wait = options.retrySeconds[delivery.attempts];
  const status = ok ? 'succeeded' : tried === null || wait === undefined ? 'failed' : 'pending';
  const last = tried?.error ?? `status ${tried?.status}`;
  await q.query(
    'WITH attempt AS (INSERT INTO "webhook_attempt" ("organisation_id", "delivery_id", "status_code", "error",' +
      ' "duration_ms") SELECT $1::text::uuid, $2::text::uuid, $5::text::int4, $6::text, $7::text::int4' +
      ' WHERE $7::text IS NOT NULL),' +
      ' delivery AS (UPDATE "webhook_delivery" SET "status" = $3::text,' +
      ' "attempts" = "attempts" + CASE WHEN $7::text IS NULL THEN 0 ELSE 1 END, "locked_until" = NULL,' +
      ` "updated_at" = now(), "delivered_at" = CASE WHEN $3::text = 'succeeded' THEN now() END,` +
      ' "next_attempt_at" = now() + make_interval(secs => coalesce($4::text::int4, 0))' +
      ' WHERE "organisation_id" = $1::text::uuid AND "id" = $2::text::uuid RETURNING "endpoint_id")' +
      ' UPDATE "webhook_endpoint" e SET "enabled" = false, "disabled_reason" = $8::text, "updated_at" = now()' +
      ` FROM delivery d WHERE $3::text = 'failed' AND e."organisation_id" = $1::text::uuid` +
      ' AND e."id" = d."endpoint_id" AND e."enabled"',
    [
      delivery.organisation_id,
      delivery.id,
      status,
      status === 'pending' ? String(wait) : null,
      tried?.status == null ? null : String(tried.status),
      tried?.error ?? null,
      tried === null ? null : String(Math.round(tried.ms)),
      `a delivery failed ${delivery.attempts + 1} times, the last: ${last}`,
    ],
  );
}

/** Posts one claimed delivery, signed, and records what came of it. */
async function deliver(db: Database, delivery: Claimed, options: DeliveryOptions) {
  if (!delivery.enabled) return record(db, delivery, null, options);
  const headers = signedHeaders(delivery.secret, delivery.id, Math.floor(Date.now() / 1000), delivery.payload);
  const started = performance.now();
  const outcome = await post(delivery.url, headers, delivery.payload, options);
  return record(db, delivery, { ...outcome, ms: performance.now() - started }, options);
}

/** One round of work: events moved, due deliveries posted; false when there was nothing to do. */
export async function deliverRound(db: Database, engine: Engine, options: DeliveryOptions): Promise<boolean> {
  const moved = await moveEvents(db, engine);
  // Held past the post's timeout, so no other process takes a delivery still being posted.
  const claimed = await claim(db, Math.ceil(options.timeoutMs / 1000) + 30);
  await Promise.all(claimed.map((delivery) => deliver(db, delivery, options)));
  return moved > 0 || claimed.length > 0;
}

/** Sends a delivery of the organisation again, from its first try; null when it has none of that id. */
export async function redeliver(db: Database, organisationId: string, id: string) {
  const [row] = await db.query(
    `UPDATE "webhook_delivery" SET "status" = 'pending', "attempts" = 0, "next_attempt_at" = now(),` +
      ' "locked_until" = NULL, "delivered_at" = NULL, "updated_at" = now()' +
      ' WHERE "organisation_id" = $1::text::uuid AND "id" = $2::text::uuid' +
      ` RETURNING "id"::text AS id, "endpoint_id"::text AS endpoint_id, "type", "status", "attempts",` +
      ` to_json("next_attempt_at") #>> '{}' AS next_attempt_at`,
    [organisationId, id],
  );
  return row ?? null;
}
