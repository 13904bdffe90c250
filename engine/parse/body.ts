/** Request bodies: JSON only (docs/contract.md section 3), parsed once and handed to the planner. */
import { ApiError } from '../errors.ts';

const JSON_MEDIA = /^application\/(?:[\w.+-]+\+)?json$/i;

/** The media type of a Content-Type header, without its parameters. */
const mediaOf = (contentType: string | null | undefined) => contentType?.split(';')[0]?.trim();

/** The body's JSON value; 415 for another media type, 400 for an empty or malformed body. */
export function parseJsonBody(text: string | null, contentType: string | null | undefined): unknown {
  const media = mediaOf(contentType);
  if (media && !JSON_MEDIA.test(media)) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `the body must be application/json, not ${media}`, {
      hint: 'Send the body as JSON with Content-Type: application/json.',
    });
  }
  if (text === null || text.trim() === '') {
    throw new ApiError('INVALID_JSON', 'the request body is empty; send a JSON object or array');
  }
  try {
    return parseJson(text);
  } catch (error) {
    throw new ApiError('INVALID_JSON', `the request body is not valid JSON: ${(error as Error).message}`);
  }
}

/** The media type of a QUERY request's body: a query string, as an HTML form sends it. */
export const FORM_MEDIA = 'application/x-www-form-urlencoded';

/**
 * The query of an HTTP QUERY request: its URL's query string, then its body's, for filters too long
 * for a URL. 415 for a body of another media type.
 */
export function queryWithBody(query: string, text: string | null | undefined, contentType: string | null | undefined) {
  if (!text) return query;
  const media = mediaOf(contentType);
  if (media?.toLowerCase() !== FORM_MEDIA) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `the body of QUERY must be ${FORM_MEDIA}, not ${media || 'untyped'}`, {
      hint: `Send the query string as the body with Content-Type: ${FORM_MEDIA}.`,
    });
  }
  const head = query.replace(/^\?/, '');
  return head ? `${head}&${text}` : text;
}

/**
 * The deepest a JSON value may nest (arrays and objects in each other). No record needs more, and
 * PostgreSQL, which reads custom-field values and entity data as jsonb, runs out of stack at a few
 * thousand levels.
 */
export const MAX_JSON_DEPTH = 100;

/** JSON.parse, refusing (SyntaxError) a value nested deeper than MAX_JSON_DEPTH. */
export function parseJson(text: string): unknown {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) throw new SyntaxError(`it nests deeper than ${MAX_JSON_DEPTH} levels`);
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return JSON.parse(text);
}
