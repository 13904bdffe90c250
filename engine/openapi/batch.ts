/** The OpenAPI of batches: `POST /$batch`, several operations in one transaction (handle/batch.ts). */
import { JSON_MEDIA } from '../media-types.ts';
import { errors, type Json, ref, requestId } from './components.ts';

const OPERATION: Json = {
  type: 'object',
  additionalProperties: false,
  required: ['method', 'path'],
  properties: {
    ref: {
      type: 'string',
      pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
      description:
        'A name later operations use in `@{ref.field}`: a field of the one row this operation wrote or read.',
    },
    method: { type: 'string', enum: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] },
    path: {
      type: 'string',
      minLength: 1,
      description: 'A path of this API with its query string: `/<resource>?<query>` or `/rpc/<function>`.',
    },
    headers: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: 'Its own headers (Prefer, Accept, If-Match).',
    },
    body: { description: 'Its JSON body; any string in it may hold `@{ref.field}` references.' },
  },
};

const RESULT: Json = {
  type: 'object',
  required: ['status', 'headers', 'body'],
  properties: {
    status: { type: 'integer' },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
    body: { description: 'The body the operation would answer alone: JSON, CSV text, or null.' },
  },
};

export function batchPathItem(maxOperations: number, idempotency: boolean): Json {
  return {
    post: {
      tags: ['$batch'],
      operationId: 'batch',
      summary: 'Run several operations in one transaction',
      description:
        'Operations run in order in one transaction, all or nothing, each served as it would be alone. ' +
        '`@{ref.field}` in a path or a body string is a field of the one row the operation named `ref` wrote or ' +
        'read. The first failure rolls everything back and answers that failure, with `operation`: its index. ' +
        '`Prefer: tx=rollback` runs the operations and keeps nothing.',
      parameters: idempotency ? [ref('parameters', 'Idempotency-Key')] : [],
      requestBody: {
        required: true,
        content: {
          [JSON_MEDIA]: {
            schema: {
              type: 'object',
              additionalProperties: false,
              required: ['operations'],
              properties: { operations: { type: 'array', minItems: 1, maxItems: maxOperations, items: OPERATION } },
            },
          },
        },
      },
      responses: {
        200: {
          description: 'OK: every operation succeeded; their answers, in order.',
          headers: requestId,
          content: {
            [JSON_MEDIA]: {
              schema: {
                type: 'object',
                required: ['results'],
                properties: { results: { type: 'array', items: RESULT } },
              },
            },
          },
        },
        ...errors(400, 401, 403, 406, 409, 412, 415),
      },
    },
  };
}
