/** Parse stage: query string and headers to a typed ApiRequest. Nothing here knows the registry. */
import type { ApiRequest, Method } from '../request.ts';
import { type HeaderLookup, parseAccept, parsePreferences, parseRange } from './headers.ts';
import { parseEntityTags } from './preconditions.ts';
import { parseQuery } from './query.ts';

export interface RawRequest {
  /** Any HTTP method; the engine answers 405 for those a resource does not offer. */
  readonly method: string;
  readonly resource: string;
  /** The raw query string, with or without its leading "?". */
  readonly query: string;
  readonly header: HeaderLookup;
  /** The body's text (POST, PATCH, QUERY), already limited in size by the host. */
  readonly body?: string | null;
}

/** The headers parseRequest reads for a read (GET, HEAD); with the method, resource and query they decide its result. */
export const REQUEST_HEADERS = ['prefer', 'accept', 'range', 'range-unit'] as const;

export function parseRequest(raw: RawRequest & { readonly method: Method }): ApiRequest {
  return {
    method: raw.method,
    resource: raw.resource,
    query: parseQuery(raw.query),
    preferences: parsePreferences(raw.header('prefer')),
    format: parseAccept(raw.header('accept')),
    range: raw.method === 'GET' ? parseRange(raw.header('range'), raw.header('range-unit')) : null,
    ifMatch: raw.method === 'PATCH' || raw.method === 'DELETE' ? parseEntityTags(raw.header('if-match')) : null,
  };
}
