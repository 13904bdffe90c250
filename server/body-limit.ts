/** Body limits (decisions.md section 6), decided while reading: a chunked body is cut off at the limit. */
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from '../engine/errors.ts';

/** Every endpoint but the batch imports and file uploads. */
export const BODY_LIMIT = 1024 * 1024;
/** The three batch imports. */
export const BATCH_LIMIT = 5 * 1024 * 1024;

export const limitBody = (maxSize: number) =>
  bodyLimit({
    maxSize,
    onError: () => {
      throw new ApiError('PAYLOAD_TOO_LARGE', `the request body is larger than ${maxSize} bytes`);
    },
  });
