/**
 * Imports (docs/v1.md): batch imports, import files and the jobs that import
 * them, for the registry's resources that offer imports. A module beside the engine: it keeps files
 * and jobs in its own tables, writes items through the engine's importers, and this facade is all
 * its callers see.
 * @example
 * const imports = createImports({ db, engine });
 * const worker = imports.startWorker(); // in every server process
 * const result = await imports.batch('contacts', organisationId, '{"items": [...]}', 'application/json');
 */
import {
  ApiError,
  type BatchResult,
  type Database,
  type Engine,
  type Importer,
  parseJsonBody,
  type Queryable,
  UUID,
} from '@engage/engine';
import { Workers } from '../background/poller.ts';
import { type FileCommit, fileType, type StoredFile, storeFile } from './files.ts';
import { createJob, getJob, type ImportWorker, type JobView, jobView, startImportWorker } from './jobs.ts';

export type { BatchResult } from '@engage/engine';
export type { FileCommit, StoredFile } from './files.ts';
// The CLI counts and reshapes a JSON file's items as the jobs read them.
export { jsonFileItems, ndjsonLines } from './files.ts';
export type { ImportWorker, JobView } from './jobs.ts';

export interface ImportsOptions {
  readonly db: Database;
  readonly engine: Engine;
}

export interface Imports {
  /**
   * Imports `{"items": [...]}` (JSON text) into a collection for an organisation, in one
   * transaction (`tx`, the caller's, or one of its own): each item created or, matched on
   * external_id, updated, or failed with its reason.
   */
  batch(
    collection: string,
    organisationId: string,
    body: string,
    contentType: string | undefined,
    tx?: Queryable | null,
  ): Promise<BatchResult>;
  /**
   * Stores an uploaded CSV, JSON or NDJSON file, read piece by piece and refused past `maxBytes`;
   * `commit` marks it complete (by default on its own), else it is deleted.
   */
  storeFile(
    organisationId: string,
    contentType: string | undefined,
    body: ReadableStream<Uint8Array> | null,
    maxBytes: number,
  ): Promise<StoredFile>;
  storeFile<T>(
    organisationId: string,
    contentType: string | undefined,
    body: ReadableStream<Uint8Array> | null,
    maxBytes: number,
    commit: FileCommit<T>,
  ): Promise<T>;
  /**
   * Queues the import of a stored file (`{"file_id": "..."}` as JSON text): in `tx` (the caller's,
   * who then calls `wake` once it commits), or on its own, waking this process's workers.
   */
  startJob(
    collection: string,
    organisationId: string,
    body: string,
    contentType: string | undefined,
    tx?: Queryable | null,
  ): Promise<JobView>;
  /** Wakes this process's workers: a job was queued. */
  wake(): void;
  /** A job of the organisation; 404 when it has none of that id. */
  getJob(organisationId: string, id: string): Promise<JobView>;
  /** Jobs by status and the items they wrote, over every organisation (for metrics). */
  stats(): Promise<ImportStats>;
  /** Runs queued jobs in this process, polling every `pollMs` (default 1000). */
  startWorker(options?: { pollMs?: number; onError?: (error: unknown) => void }): ImportWorker;
}

export interface ImportStats {
  /** Jobs by status: queued, running, succeeded, failed. */
  readonly jobs: Readonly<Record<string, number>>;
  /** Items of jobs created, updated and failed. */
  readonly items: { readonly created: number; readonly updated: number; readonly failed: number };
}

const notFound = (what: string) => new ApiError('NOT_FOUND', `there is no ${what} with that id in your organisation`);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function createImports(options: ImportsOptions): Imports {
  const { db, engine } = options;
  const collections = engine.registry.resources.flatMap((r) => (r.imports && r.collection ? [r.collection] : []));
  const workers = new Workers();

  function target(collection: string): Importer {
    const found = engine.importer(collection);
    if (!found) {
      throw new ApiError(
        'NOT_FOUND',
        `there is no import of "${collection}"; imports exist for ${collections.join(', ')}`,
      );
    }
    return found;
  }

  function store(
    organisationId: string,
    contentType: string | undefined,
    body: ReadableStream<Uint8Array> | null,
    maxBytes: number,
  ): Promise<StoredFile>;
  function store<T>(
    organisationId: string,
    contentType: string | undefined,
    body: ReadableStream<Uint8Array> | null,
    maxBytes: number,
    commit: FileCommit<T>,
  ): Promise<T>;
  function store(
    organisationId: string,
    contentType: string | undefined,
    body: ReadableStream<Uint8Array> | null,
    maxBytes: number,
    commit: FileCommit<unknown> = async (file, complete) => {
      await complete(null);
      return file;
    },
  ) {
    return storeFile(db, organisationId, fileType(contentType), body, maxBytes, commit);
  }

  return {
    async batch(collection, organisationId, text, contentType, tx) {
      const into = target(collection);
      const body = parseJsonBody(text, contentType);
      if (!isObject(body) || !Array.isArray(body.items)) {
        throw new ApiError('VALIDATION_FAILED', 'the body must be {"items": [...]}', {
          context: [{ field: 'items', message: 'must be an array' }],
        });
      }
      const unknown = Object.keys(body).filter((k) => k !== 'items');
      if (unknown.length > 0) {
        throw new ApiError(
          'UNKNOWN_FIELD',
          `the batch envelope has no field ${unknown.map((k) => `"${k}"`).join(', ')}`,
        );
      }
      const items = body.items;
      return tx
        ? into.write(tx, organisationId, items)
        : db.transaction((own) => into.write(own, organisationId, items), organisationId);
    },

    storeFile: store,

    async startJob(collection, organisationId, text, contentType, tx) {
      const into = target(collection);
      const body = parseJsonBody(text, contentType);
      const fileId = isObject(body) ? body.file_id : undefined;
      if (typeof fileId !== 'string' || !UUID.test(fileId)) {
        throw new ApiError('VALIDATION_FAILED', 'the body must be {"file_id": "<id from POST /v1/files>"}', {
          context: [{ field: 'file_id', message: 'must be a uuid' }],
        });
      }
      const job = await createJob(tx ?? db, organisationId, into.collection, fileId);
      if (!job) throw notFound('file');
      if (!tx) workers.wake();
      return jobView(job);
    },

    wake: () => workers.wake(),

    async getJob(organisationId, id) {
      const job = UUID.test(id) ? await getJob(db, organisationId, id) : null;
      if (!job) throw notFound('import');
      return jobView(job);
    },

    async stats() {
      const rows = await db.query<{ status: string; jobs: string; created: string; updated: string; failed: string }>(
        'SELECT "status", count(*)::text AS jobs, coalesce(sum("created"), 0)::text AS created,' +
          ' coalesce(sum("updated"), 0)::text AS updated, coalesce(sum("failed"), 0)::text AS failed' +
          ' FROM "import_job" GROUP BY "status"',
      );
      const jobs: Record<string, number> = { queued: 0, running: 0, succeeded: 0, failed: 0 };
      const items = { created: 0, updated: 0, failed: 0 };
      for (const row of rows) {
        jobs[row.status] = Number(row.jobs);
        items.created += Number(row.created);
        items.updated += Number(row.updated);
        items.failed += Number(row.failed);
      }
      return { jobs, items };
    },

    startWorker: (workerOptions = {}) => workers.add(startImportWorker({ db, engine, ...workerOptions })),
  };
}
