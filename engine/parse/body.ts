/** Request bodies: JSON only (docs/contract.md section 3), parsed once and handed to the planner. */
import { ApiError } from '../errors.ts';

const JSON_MEDIA = /^application\/(?:[\w.+-]+\+)?json$/i;

/** The body's JSON value; 415 for another media type, 400 for an empty or malformed body. */
export function parseJsonBody(text: string | null, contentType: string | null | undefined): unknown {
  const media = contentType?.split(';')[0]?.trim();
  if (media && !JSON_MEDIA.test(media)) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `the body must be application/json, not ${media}`, {
      hint: 'Send the body as JSON with Content-Type: application/json.',
    });
  }
  if (text === null || text.trim() === '') {
    throw new ApiError('INVALID_JSON', 'the request body is empty; send a JSON object or array');
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ApiError('INVALID_JSON', `the request body is not valid JSON: ${(error as Error).message}`);
  }
}
