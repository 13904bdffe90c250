/**
 * Import files, streamed into the database as they arrive (so any server process can read them):
 * the text in pieces of about 1 MiB, the SHA-256 and size of the bytes, refused past a size cap
 * while reading, never buffered whole; and what a JSON file's items are, for the jobs and the CLI alike.
 */
import { createHash } from 'node:crypto';
import { ApiError, type Database, parseJson, type Queryable } from '@engage/engine';

export const FILE_TYPES = ['text/csv', 'application/json', 'application/x-ndjson'] as const;
export type FileType = (typeof FILE_TYPES)[number];

const PIECE = 1024 * 1024;

/** A file whose content is not the shape of an import file. */
export class FileFormatError extends Error {}

/** The items of a JSON import file: an array of items, or `{"items": [...]}`. */
export function jsonFileItems(text: string): unknown[] {
  const parsed = parseJson(text);
  const list = Array.isArray(parsed) ? parsed : (parsed as { items?: unknown } | null)?.items;
  if (!Array.isArray(list))
    throw new FileFormatError('a JSON import file must be an array of items, or {"items": [...]}');
  return list;
}

/** Whether a line of an NDJSON import file holds an item: every line but the blank ones. */
export const isItemLine = (line: string): boolean => line.trim() !== '';

/** The lines of an NDJSON import file that hold an item. */
export const ndjsonLines = (text: string): string[] => text.split('\n').filter(isItemLine);

export interface StoredFile {
  readonly id: string;
  readonly size: number;
  readonly content_type: FileType;
  readonly sha256: string;
}

export function fileType(header: string | null | undefined): FileType {
  const media = header?.split(';')[0]?.trim().toLowerCase();
  const type = FILE_TYPES.find((t) => t === media);
  if (!type) {
    throw new ApiError(
      'UNSUPPORTED_MEDIA_TYPE',
      `an import file must be ${FILE_TYPES.join(', ')}, not ${media ?? 'unnamed'}`,
      {
        hint: 'Send the file as the request body with its Content-Type.',
      },
    );
  }
  return type;
}

/**
 * Marks a stored file complete: `complete(q)` on a transaction of the caller's (null: on its own).
 * A caller may decline (a retry answered from before): the file is then deleted.
 */
export type FileCommit<T> = (file: StoredFile, complete: (q: Queryable | null) => Promise<void>) => Promise<T>;

/**
 * Stores a body stream as a file of the organisation. Each piece is its own short statement (a
 * slow upload must not hold a transaction, which on PGlite would stall every other request); the
 * file counts as complete once its SHA-256 is set (by `commit`), and is deleted if the upload fails
 * or `commit` does not complete it.
 */
export async function storeFile<T>(
  db: Database,
  organisationId: string,
  type: FileType,
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  commit: FileCommit<T>,
): Promise<T> {
  const [file] = await db.query<{ id: string }>(
    'INSERT INTO "file" ("organisation_id", "content_type") VALUES ($1::text::uuid, $2::text) RETURNING "id"::text AS id',
    [organisationId, type],
  );
  const id = file!.id;
  /** The file's row: $1 and $2 are its organisation and id. */
  const where = '"organisation_id" = $1::text::uuid AND "id" = $2::text::uuid';
  const hash = createHash('sha256');
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let size = 0;
  let seq = 0;
  let pending = '';
  const flush = async (text: string) => {
    await db.query(
      'INSERT INTO "file_chunk" ("organisation_id", "file_id", "seq", "data")' +
        ' VALUES ($1::text::uuid, $2::text::uuid, $3::text::int4, $4::text)',
      [organisationId, id, String(seq++), text],
    );
  };
  const decode = (bytes?: Uint8Array) => {
    try {
      return bytes ? decoder.decode(bytes, { stream: true }) : decoder.decode();
    } catch {
      throw new ApiError('VALIDATION_FAILED', 'the file is not UTF-8 text');
    }
  };
  const reader = body?.getReader();
  const discard = () =>
    db.query(`DELETE FROM "file" WHERE ${where}`, [organisationId, id]).then(
      () => {},
      () => {},
    );
  try {
    for (;;) {
      const next = await reader?.read();
      if (!next || next.done) break;
      size += next.value.byteLength;
      if (size > maxBytes)
        throw new ApiError('PAYLOAD_TOO_LARGE', `the file is larger than the limit of ${maxBytes} bytes`);
      hash.update(next.value);
      pending += decode(next.value);
      if (pending.includes('\u0000'))
        throw new ApiError('VALIDATION_FAILED', 'the file contains NUL characters, which text cannot hold');
      if (pending.length >= PIECE) {
        await flush(pending);
        pending = '';
      }
    }
    pending += decode();
    if (size === 0) throw new ApiError('VALIDATION_FAILED', 'the file is empty');
    if (pending) await flush(pending);
    const sha256 = hash.digest('hex');
    let completed = false;
    const complete = async (q: Queryable | null) => {
      await (q ?? db).query(`UPDATE "file" SET "size" = $3::text::int8, "sha256" = $4::text WHERE ${where}`, [
        organisationId,
        id,
        String(size),
        sha256,
      ]);
      completed = true;
    };
    const result = await commit({ id, size, content_type: type, sha256 }, complete);
    if (!completed) await discard();
    return result;
  } catch (error) {
    await reader?.cancel().catch(() => {});
    await discard();
    throw error;
  }
}

/** The file's text, piece by piece, in order. */
export async function* readFile(q: Queryable, organisationId: string, fileId: string): AsyncGenerator<string> {
  for (let seq = 0; ; seq++) {
    const [piece] = await q.query<{ data: string }>(
      'SELECT "data" FROM "file_chunk" WHERE "organisation_id" = $1::text::uuid AND "file_id" = $2::text::uuid' +
        ' AND "seq" = $3::text::int4',
      [organisationId, fileId, String(seq)],
    );
    if (!piece) return;
    yield piece.data;
  }
}
