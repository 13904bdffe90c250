/**
 * Import jobs: rows of `import_job`, claimed by one server process at a time with
 * `FOR UPDATE SKIP LOCKED`, processed in batches that each commit the items they wrote together
 * with the job's progress. A job whose process died (no heartbeat for a while) is claimed again
 * and resumes after the last committed item, so nothing is written twice.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type BatchResult, type Database, type Engine, type Importer, parseJson, type Queryable } from '@engage/engine';
import { parse } from 'csv-parse';
import { type Poller, startPoller } from '../background/poller.ts';
import { FileFormatError, type FileType, isItemLine, jsonFileItems, readFile } from './files.ts';

export const JOB_BATCH = 1000;
/** How many item errors a job keeps for GET /v1/imports/{id}. */
export const JOB_ERRORS = 100;
/** A running job whose heartbeat is older than this is taken to be abandoned. */
const STALE_SECONDS = 60;

export interface Job {
  id: string;
  organisation_id: string;
  resource: string;
  file_id: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  processed: number;
  created: number;
  updated: number;
  failed: number;
  /** JSON text of the first item errors. */
  errors: string;
  error: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

/** The job's columns over table alias `j`. */
const JOB_COLUMNS =
  'j."id"::text AS id, j."organisation_id"::text AS organisation_id, j."resource", j."file_id"::text AS file_id,' +
  ' j."status", j."processed", j."created", j."updated", j."failed", j."errors"::text AS errors, j."error",' +
  ` to_json(j."created_at") #>> '{}' AS created_at,` +
  ` to_json(j."updated_at") #>> '{}' AS updated_at, to_json(j."finished_at") #>> '{}' AS finished_at`;

/** The JSON a client sees for a job. */
export type JobView = ReturnType<typeof jobView>;

export const jobView = (job: Job) => ({
  id: job.id,
  resource: job.resource,
  file_id: job.file_id,
  status: job.status,
  processed: job.processed,
  created: job.created,
  updated: job.updated,
  failed: job.failed,
  errors: JSON.parse(job.errors) as unknown[],
  ...(job.error ? { error: job.error } : {}),
  created_at: job.created_at,
  updated_at: job.updated_at,
  finished_at: job.finished_at,
});

export async function createJob(
  q: Queryable,
  organisationId: string,
  resource: string,
  fileId: string,
): Promise<Job | null> {
  const [job] = await q.query<Job & Record<string, unknown>>(
    'INSERT INTO "import_job" AS j ("organisation_id", "resource", "file_id")' +
      ' SELECT $1::text::uuid, $2::text, f."id" FROM "file" f' +
      ' WHERE f."organisation_id" = $1::text::uuid AND f."id" = $3::text::uuid AND f."sha256" IS NOT NULL' +
      ` RETURNING ${JOB_COLUMNS}`,
    [organisationId, resource, fileId],
  );
  return job ?? null;
}

export async function getJob(q: Queryable, organisationId: string, id: string): Promise<Job | null> {
  const [job] = await q.query<Job & Record<string, unknown>>(
    `SELECT ${JOB_COLUMNS} FROM "import_job" j WHERE j."organisation_id" = $1::text::uuid AND j."id" = $2::text::uuid`,
    [organisationId, id],
  );
  return job ?? null;
}

/**
 * Claims the oldest queued (or abandoned) job, if any. The queue is read across organisations, so
 * the planner may scan it as it sees fit: the pool prices sequential scans out for tenant reads.
 */
async function claim(db: Database): Promise<(Job & { content_type: FileType }) | null> {
  return db.transaction(async (tx) => {
    await tx.query('SET LOCAL enable_seqscan = on');
    return claimOn(tx);
  });
}

async function claimOn(db: Queryable): Promise<(Job & { content_type: FileType }) | null> {
  const [job] = await db.query<Job & { content_type: FileType } & Record<string, unknown>>(
    `UPDATE "import_job" j SET "status" = 'running', "locked_at" = now(), "updated_at" = now()
     FROM (SELECT "organisation_id", "id" FROM "import_job"
           WHERE "status" = 'queued'` +
      ` OR ("status" = 'running' AND "locked_at" < now() - make_interval(secs => ${STALE_SECONDS}))
           ORDER BY "created_at" LIMIT 1 FOR UPDATE SKIP LOCKED) next
     WHERE j."organisation_id" = next."organisation_id" AND j."id" = next."id"
     RETURNING ${JOB_COLUMNS},
       (SELECT f."content_type" FROM "file" f` +
      ' WHERE f."organisation_id" = j."organisation_id" AND f."id" = j."file_id") AS content_type',
  );
  return job ?? null;
}

/** The file's items, in order: CSV records (header row first), a JSON array, or NDJSON lines. */
async function* items(q: Queryable, job: Job, type: FileType, importer: Importer): AsyncGenerator<unknown> {
  const text = readFile(q, job.organisation_id, job.file_id);
  if (type === 'text/csv') {
    const fromCsv = await importer.csv(q, job.organisation_id);
    const parser = parse({ columns: true, bom: true, skip_empty_lines: true, relax_column_count: false });
    // pipeline ends the parser when the text ends and destroys it (failing the loop) on an error.
    const feeding = pipeline(Readable.from(text), parser);
    feeding.catch(() => {});
    for await (const record of parser) yield fromCsv(record as Record<string, string>);
    await feeding;
    return;
  }
  if (type === 'application/x-ndjson') {
    let rest = '';
    for await (const piece of text) {
      const lines = (rest + piece).split('\n');
      rest = lines.pop()!;
      for (const line of lines.filter(isItemLine)) yield parseJson(line);
    }
    if (isItemLine(rest)) yield parseJson(rest);
    return;
  }
  let whole = '';
  for await (const piece of text) whole += piece;
  yield* jsonFileItems(whole);
}

/** Another process resumed this job (this one was taken for dead): leave it to that one. */
class TakenOver extends Error {}

/** Writes one batch and the job's progress in one transaction. */
async function commitBatch(
  db: Database,
  job: Job,
  importer: Importer,
  batch: unknown[],
  offset: number,
  errorsKept: number,
): Promise<BatchResult> {
  return db.transaction(async (tx) => {
    // The job row is locked for the batch; its progress must still be where this process left it.
    const [row] = await tx.query<{ processed: number }>(
      'SELECT "processed" FROM "import_job" WHERE "organisation_id" = $1::text::uuid AND "id" = $2::text::uuid' +
        ' FOR UPDATE',
      [job.organisation_id, job.id],
    );
    if (row?.processed !== offset) throw new TakenOver();
    const result = await importer.write(tx, job.organisation_id, batch, offset);
    const errors = result.results.filter((r) => r.status === 'failed').slice(0, Math.max(0, JOB_ERRORS - errorsKept));
    await tx.query(
      'UPDATE "import_job" SET "processed" = "processed" + $3::text::int4, "created" = "created" + $4::text::int4,' +
        ' "updated" = "updated" + $5::text::int4, "failed" = "failed" + $6::text::int4,' +
        ' "errors" = "errors" || $7::text::jsonb, "locked_at" = now(), "updated_at" = now()' +
        ' WHERE "organisation_id" = $1::text::uuid AND "id" = $2::text::uuid',
      [
        job.organisation_id,
        job.id,
        String(batch.length),
        String(result.created),
        String(result.updated),
        String(result.failed),
        JSON.stringify(errors),
      ],
    );
    return result;
  });
}

/** Ends a job, and records its event (`import.succeeded`, `import.failed`) for the organisation's webhooks. */
async function finish(db: Database, engine: Engine, job: Job, error: string | null) {
  await db.transaction(async (tx) => {
    const [ended] = await tx.query<Job & Record<string, unknown>>(
      `UPDATE "import_job" j SET "status" = $3::text, "error" = $4::text, "finished_at" = now(), "updated_at" = now()` +
        ` WHERE j."organisation_id" = $1::text::uuid AND j."id" = $2::text::uuid RETURNING ${JOB_COLUMNS}`,
      [job.organisation_id, job.id, error ? 'failed' : 'succeeded', error],
    );
    if (ended) await engine.events?.emit(tx, job.organisation_id, `import.${ended.status}`, jobView(ended));
  });
}

/** Puts a job this process stops on back in the queue, for any process to resume at once. */
async function release(db: Database, job: Job, processed: number) {
  // Only while the progress is this process's own: one that took the job over keeps it.
  await db.query(
    `UPDATE "import_job" SET "status" = 'queued', "updated_at" = now()` +
      ' WHERE "organisation_id" = $1::text::uuid AND "id" = $2::text::uuid' +
      ` AND "status" = 'running' AND "processed" = $3::text::int4`,
    [job.organisation_id, job.id, String(processed)],
  );
}

/**
 * Runs one claimed job to its end, resuming after the items already processed. Once `stopping()`,
 * it commits the items in hand and puts the job back in the queue.
 */
async function run(
  db: Database,
  engine: Engine,
  job: Job & { content_type: FileType },
  importer: Importer,
  stopping: () => boolean,
) {
  let index = 0;
  let errorsKept = (JSON.parse(job.errors) as unknown[]).length;
  let batch: unknown[] = [];
  const flush = async () => {
    const result = await commitBatch(db, job, importer, batch, index - batch.length, errorsKept);
    errorsKept += result.failed;
    batch = [];
    // A turn of the event loop between batches: on PGlite the job otherwise runs in promise
    // continuations alone, holding off every request, and the signal to stop, until it ends.
    await new Promise((resolve) => setImmediate(resolve));
  };
  try {
    for await (const item of items(db, job, job.content_type, importer)) {
      if (stopping()) {
        if (batch.length > 0) await flush();
        await release(db, job, Math.max(index, job.processed));
        return;
      }
      index++;
      if (index <= job.processed) continue;
      batch.push(item);
      if (batch.length >= JOB_BATCH) await flush();
    }
    if (batch.length > 0) await flush();
    await finish(db, engine, job, null);
  } catch (error) {
    if (error instanceof TakenOver) return;
    // A file that does not parse fails the job; anything else (the database went away) leaves it
    // running, to be resumed once its heartbeat is stale.
    const unreadable =
      error instanceof SyntaxError ||
      String((error as { code?: unknown }).code).startsWith('CSV_') ||
      error instanceof FileFormatError;
    if (unreadable)
      return finish(db, engine, job, `the file could not be read at item ${index + 1}: ${(error as Error).message}`);
    // A database error that retrying cannot cure (a value it refuses) fails the job too.
    const mapped = engine.asApiError(error);
    if (mapped.status < 500)
      return finish(
        db,
        engine,
        job,
        `items ${index - batch.length + 1} to ${index} could not be written: ${mapped.message}`,
      );
    throw error;
  }
}

export type ImportWorker = Poller;

/** Polls for jobs and runs them one at a time; every server process runs one. */
export function startImportWorker(options: {
  db: Database;
  engine: Engine;
  pollMs?: number;
  onError?: (error: unknown) => void;
}): ImportWorker {
  const { db, engine } = options;
  return startPoller({
    pollMs: options.pollMs ?? 1000,
    onError: options.onError,
    // A job claimed just as the worker stops goes back to the queue from its first item.
    async work(stopping) {
      for (let job = await claim(db); job; job = stopping() ? null : await claim(db)) {
        const importer = engine.importer(job.resource);
        if (importer) await run(db, engine, job, importer, stopping);
        else await finish(db, engine, job, `unknown import ${job.resource}`);
      }
    },
  });
}
