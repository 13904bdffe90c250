/**
 * Import files, streamed into the database as they arrive (so any server process can read them):
 * the text in pieces of about 1 MiB, the SHA-256 and size of the bytes, refused past a size cap
 * while reading, never buffered whole.
 */
import { createHash } from 'node:crypto';
import { Params } from '../engine/compile/sql.ts';
import type { Database, Queryable } from '../engine/db/port.ts';
import { ApiError } from '../engine/errors.ts';

export const FILE_TYPES = ['text/csv', 'application/json', 'application/x-ndjson'] as const;
export type FileType = (typeof FILE_TYPES)[number];

const PIECE = 1024 * 1024;

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
 * Stores a body stream as a file of the organisation. Each piece is its own short statement (a
 * slow upload must not hold a transaction, which on PGlite would stall every other request); the
 * file counts as complete once its SHA-256 is set, and is deleted if the upload fails.
 */
export async function storeFile(
  db: Database,
  organisationId: string,
  type: FileType,
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<StoredFile> {
  const params = new Params();
  const org = params.add(organisationId, 'uuid');
  const [file] = await db.query<{ id: string }>(
    `INSERT INTO "file" ("organisation_id", "content_type") VALUES (${org}, ${params.add(type, 'text')})` +
      ' RETURNING "id"::text AS id',
    params.values,
  );
  const id = file!.id;
  const where = (p: Params) => `"organisation_id" = ${p.add(organisationId, 'uuid')} AND "id" = ${p.add(id, 'uuid')}`;
  const hash = createHash('sha256');
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let size = 0;
  let seq = 0;
  let pending = '';
  const flush = async (text: string) => {
    const p = new Params();
    await db.query(
      'INSERT INTO "file_chunk" ("organisation_id", "file_id", "seq", "data")' +
        ` VALUES (${p.add(organisationId, 'uuid')}, ${p.add(id, 'uuid')},` +
        ` ${p.add(String(seq++), 'int4')}, ${p.add(text, 'text')})`,
      p.values,
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
    const p = new Params();
    await db.query(
      `UPDATE "file" SET "size" = ${p.add(String(size), 'int8')}, "sha256" = ${p.add(sha256, 'text')}` +
        ` WHERE ${where(p)}`,
      p.values,
    );
    return { id, size, content_type: type, sha256 };
  } catch (error) {
    await reader?.cancel().catch(() => {});
    const p = new Params();
    await db.query(`DELETE FROM "file" WHERE ${where(p)}`, p.values).catch(() => {});
    throw error;
  }
}

/** The file's text, piece by piece, in order. */
export async function* readFile(q: Queryable, organisationId: string, fileId: string): AsyncGenerator<string> {
  for (let seq = 0; ; seq++) {
    const p = new Params();
    const [piece] = await q.query<{ data: string }>(
      `SELECT "data" FROM "file_chunk" WHERE "organisation_id" = ${p.add(organisationId, 'uuid')}` +
        ` AND "file_id" = ${p.add(fileId, 'uuid')} AND "seq" = ${p.add(String(seq), 'int4')}`,
      p.values,
    );
    if (!piece) return;
    yield piece.data;
  }
}
