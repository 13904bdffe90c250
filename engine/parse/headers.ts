/** The request headers the engine reads: Prefer, Range, Range-Unit, Accept and Consistency-Token. */

import { ApiError } from '../errors.ts';
import { CSV_MEDIA, JSON_MEDIA, OBJECT_MEDIA } from '../media-types.ts';
import type { Preferences, RangeHeader, ResponseFormat } from '../request.ts';
import { parsePosition } from '../wal-position.ts';

export type HeaderLookup = (name: string) => string | null | undefined;

const PREFERENCE_VALUES = {
  count: ['exact', 'planned', 'estimated'],
  return: ['minimal', 'headers-only', 'representation'],
  resolution: ['merge-duplicates', 'ignore-duplicates'],
  missing: ['default', 'null'],
  handling: ['strict', 'lenient'],
  tx: ['commit', 'rollback'],
  params: ['single-object'],
} as const;

/**
 * RFC 7240 as PostgREST reads it: every Prefer header joined, split on ",", first occurrence of
 * each preference wins, unknown ones ignored unless `handling=strict` asks for an error.
 */
export function parsePreferences(header: string | null | undefined): Preferences {
  const prefs: Record<string, string | number | null> = {
    count: null,
    return: null,
    resolution: null,
    missing: null,
    handling: null,
    tx: null,
    params: null,
    maxAffected: null,
  };
  const invalid: string[] = [];
  for (const raw of (header ?? '').split(',')) {
    const item = raw.trim();
    if (!item) continue;
    const [name = '', value = ''] = item.split('=', 2).map((x) => x.trim());
    // `Prefer: explain` asks for the plan (parseExplain), not a preference of the result.
    if (name === 'explain' && value === '') continue;
    if (name === 'max-affected' && /^\d+$/.test(value)) {
      prefs.maxAffected ??= Number(value);
      continue;
    }
    const allowed: readonly string[] | undefined = Object.hasOwn(PREFERENCE_VALUES, name)
      ? PREFERENCE_VALUES[name as keyof typeof PREFERENCE_VALUES]
      : undefined;
    if (allowed?.includes(value)) prefs[name] ??= value;
    else invalid.push(item);
  }
  const result = prefs as unknown as Preferences;
  if (result.handling === 'strict' && invalid.length > 0) {
    throw new ApiError('INVALID_PREFERENCE', `invalid preferences given with handling=strict: ${invalid.join(', ')}`, {
      hint: 'Remove them, or drop handling=strict to have unknown preferences ignored.',
      context: { invalid },
    });
  }
  return result;
}

/** `Range: 0-24` (also `items=0-24`); `Range-Unit` must be `items` when given. */
export function parseRange(range: string | null | undefined, unit: string | null | undefined): RangeHeader | null {
  if (unit != null && unit.trim().toLowerCase() !== 'items') {
    throw new ApiError('INVALID_QUERY', `Range-Unit must be "items", not "${unit}"`, {
      context: { header: 'Range-Unit' },
    });
  }
  if (range == null || range.trim() === '') return null;
  const match = /^\s*(?:items=)?(\d{1,15})-(\d{0,15})\s*$/.exec(range);
  if (!match) {
    throw new ApiError('INVALID_QUERY', `the Range header must look like "0-24" or "25-", not "${range}"`, {
      context: { header: 'Range' },
    });
  }
  const from = Number(match[1]);
  const to = match[2] ? Number(match[2]) : null;
  if (to !== null && to < from) {
    throw new ApiError(
      'RANGE_NOT_SATISFIABLE',
      'the lower boundary of the Range header must be lower than or equal to the upper one',
      {
        context: { header: 'Range', range },
        headers: { 'Content-Range': '*/*' },
      },
    );
  }
  return { from, to };
}

const JSON_TYPES = new Set(['*/*', 'application/*', JSON_MEDIA]);
const OBJECT_TYPES = new Set([OBJECT_MEDIA, 'application/vnd.pgrst.object']);

/** Content negotiation: the first acceptable media type by q-value, JSON when none is given. */
export function parseAccept(header: string | null | undefined): ResponseFormat {
  if (header == null || header.trim() === '') return 'json';
  const offered = header
    .split(',')
    .map((part, index) => {
      const [type = '', ...params] = part.split(';').map((x) => x.trim().toLowerCase());
      const q = params.find((p) => p.startsWith('q='));
      return { type, q: q ? Number(q.slice(2)) : 1, index };
    })
    .filter((o) => o.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { type } of offered) {
    if (JSON_TYPES.has(type)) return 'json';
    if (OBJECT_TYPES.has(type)) return 'object';
    if (type === CSV_MEDIA) return 'csv';
  }
  throw new ApiError('NOT_ACCEPTABLE', `none of these media types are available: ${header}`, {
    hint: 'Accept application/json, application/vnd.pgrst.object+json for a single object, or text/csv.',
  });
}

/** What `EXPLAIN` shows with a plan (postgrest-js sends them as `options=analyze|verbose`). */
export const EXPLAIN_OPTIONS = ['analyze', 'verbose', 'settings', 'buffers', 'wal'] as const;
export type ExplainOption = (typeof EXPLAIN_OPTIONS)[number];

/** A request for the statement's plan instead of its result. */
export interface ExplainRequest {
  readonly format: 'json' | 'text';
  /** The Accept the statement is planned for (`for="application/json"`). */
  readonly for: string;
  readonly options: ReadonlySet<ExplainOption>;
}

const PLAN_MEDIA = /application\/vnd\.pgrst\.plan(?:\+(json|text))?/i;

/**
 * PostgREST's plan media type, `application/vnd.pgrst.plan+json; for="application/json";
 * options=analyze|verbose` (`+text`, or no suffix, for text), or `Prefer: explain` (JSON, planned for
 * the request's Accept); null for an ordinary request.
 */
export function parseExplain(
  accept: string | null | undefined,
  prefer: string | null | undefined,
): ExplainRequest | null {
  const match = accept ? PLAN_MEDIA.exec(accept) : null;
  if (match && accept) {
    const params = accept.slice(match.index + match[0].length);
    const target = /;\s*for\s*=\s*(?:"([^"]*)"|([^;,\s]*))/i.exec(params);
    const list = /;\s*options\s*=\s*([^;,\s]*)/i.exec(params)?.[1] ?? '';
    const options = new Set<ExplainOption>();
    for (const option of list.split('|').filter(Boolean)) {
      if (!(EXPLAIN_OPTIONS as readonly string[]).includes(option.toLowerCase())) {
        throw new ApiError('NOT_ACCEPTABLE', `"${option}" is not a plan option`, {
          hint: `Plan options: ${EXPLAIN_OPTIONS.join(', ')}, joined with "|".`,
        });
      }
      options.add(option.toLowerCase() as ExplainOption);
    }
    return {
      format: match[1]?.toLowerCase() === 'json' ? 'json' : 'text',
      for: target?.[1] ?? target?.[2] ?? JSON_MEDIA,
      options,
    };
  }
  const wanted = (prefer ?? '').split(',').some((item) => item.trim().toLowerCase() === 'explain');
  return wanted ? { format: 'json', for: accept?.trim() || JSON_MEDIA, options: new Set() } : null;
}

/**
 * What a write answers with and a read may send back: the write's WAL position. Given it, a read
 * runs where that write is already seen (engine/db/replicas.ts).
 */
export const CONSISTENCY_HEADER = 'Consistency-Token';

/** A read's Consistency-Token: undefined when it sent none, a 400 when it is not a position. */
export function parseConsistency(value: string | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (parsePosition(value.trim()) !== undefined) return value.trim();
  throw new ApiError('INVALID_REQUEST', `${CONSISTENCY_HEADER} "${value}" is not a position a write answered with`, {
    hint: `Send back the ${CONSISTENCY_HEADER} header of a write response unchanged, such as 0/16B3748.`,
  });
}
