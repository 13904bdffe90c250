/**
 * Respond stage: a result to status, headers and body, with PostgREST's rules: for reads
 * Content-Range, 206 for a partial page of a known total and 416 for an offset past the end; for
 * writes 201/200/204, Location and Preference-Applied. The body is the JSON or CSV text
 * PostgreSQL built; it is passed through untouched.
 */
import { ApiError } from './errors.ts';
import { CSV_MEDIA, contentType, JSON_MEDIA, OBJECT_MEDIA } from './media-types.ts';
import { type EntityTags, entityTag, namesVersion } from './parse/preconditions.ts';
import type { ReadPlan, WritePlan } from './plan/types.ts';
import type { ResponseFormat } from './request.ts';
import type { Timings } from './timings.ts';

export interface EngineResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  /** JSON or CSV text, or null for no body (HEAD, 204). */
  readonly body: string | null;
  /** Milliseconds by stage, when the host asked for them (`handle(..., { timings: true })`). */
  readonly timings?: Timings;
}

export interface ReadResult {
  readonly pageTotal: number;
  readonly total: number | null;
  readonly body: string | null;
  /** The version of a singular read's record, when it has versions. */
  readonly version: string | null;
}

/** The Content-Type of each format. */
const CONTENT_TYPES: Record<ResponseFormat, string> = {
  json: contentType(JSON_MEDIA),
  object: contentType(OBJECT_MEDIA),
  csv: contentType(CSV_MEDIA),
};

/** `ifNoneMatch`: a singular read of a record at one of these versions answers 304 Not Modified. */
export function respondRead(plan: ReadPlan, result: ReadResult, ifNoneMatch: EntityTags | null = null): EngineResponse {
  const { pageTotal: n, total } = result;
  const { offset } = plan;
  const upper = offset + n - 1;
  const contentRange = `${total !== 0 && n > 0 ? `${offset}-${upper}` : '*'}/${total ?? '*'}`;

  if (total !== null && offset > total) {
    throw new ApiError(
      'RANGE_NOT_SATISFIABLE',
      `an offset of ${offset} was requested, but there are only ${total} rows`,
      {
        hint: 'Ask for an offset lower than the total in Content-Range.',
        headers: { 'Content-Range': `*/${total}` },
      },
    );
  }
  if (plan.format === 'object' && n !== 1) {
    throw new ApiError(
      'NOT_ACCEPTABLE',
      `a single object was requested (application/vnd.pgrst.object+json), but the result has ${n} rows`,
      {
        hint: 'Narrow the filters to exactly one row, or accept application/json for an array.',
        details: `The result contains ${n} rows`,
        context: { rows: n },
      },
    );
  }

  const headers: Record<string, string> = {
    'Content-Type': CONTENT_TYPES[plan.format],
    'Content-Range': contentRange,
    // The same URL answers differently by these headers; caches must key on them.
    Vary: 'Accept, Prefer, Range',
  };
  if (plan.count) headers['Preference-Applied'] = `count=${plan.count}`;
  const { version } = result;
  if (version !== null) {
    headers.ETag = entityTag(version);
    if (ifNoneMatch && namesVersion(ifNoneMatch, version)) return { status: 304, headers, body: null };
  }
  const status = total !== null && n < total ? 206 : 200;
  return { status, headers, body: plan.head ? null : result.body };
}

export interface WriteResult {
  readonly affected: number;
  readonly inserted: number;
  /** The key values of the one row written, when one was. */
  readonly location: readonly unknown[] | null;
  readonly body: string | null;
  /** The version of the one row written, when one was and the resource has versions. */
  readonly version: string | null;
}

/**
 * Statuses as PostgREST gives them: POST 201 (200 when a merge-duplicates upsert only updated),
 * PATCH and DELETE 204, or 200 with the representation; PUT 204, or with the representation 201
 * when it created the record and 200 when it replaced it.
 */
export function respondWrite(plan: WritePlan, result: WriteResult): EngineResponse {
  const n = result.affected;
  const total = plan.count ? String(n) : '*';
  const headers: Record<string, string> = {
    'Content-Range': plan.kind === 'update' && n > 0 ? `0-${n - 1}/${total}` : `*/${total}`,
  };
  if (plan.applied.length > 0) headers['Preference-Applied'] = plan.applied.join(', ');
  if (plan.kind === 'insert' && plan.return === 'headers-only' && result.location !== null) {
    // Relative to the request's own URL, so it holds under /api/v1 and under any host's prefix.
    const { location } = result;
    const filters = plan.resource.key.map((f, i) => `${f.name}=eq.${encodeURIComponent(String(location[i]))}`);
    headers.Location = `${plan.resource.name}?${filters.join('&')}`;
  }
  if (result.version !== null) headers.ETag = entityTag(result.version);
  const withBody = plan.return === 'representation';
  if (withBody) headers['Content-Type'] = CONTENT_TYPES[plan.format];

  let status: number;
  if (plan.kind === 'insert' && plan.put) status = withBody ? (result.inserted > 0 ? 201 : 200) : 204;
  else if (plan.kind === 'insert') status = plan.conflict?.action === 'update' && result.inserted === 0 ? 200 : 201;
  else status = withBody ? 200 : 204;
  return { status, headers, body: withBody ? result.body : null };
}
