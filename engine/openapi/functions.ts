/**
 * The OpenAPI of the registry's functions: `/rpc/<name>` with GET (arguments in the query string,
 * for a function that changes nothing) and POST (arguments as a JSON object), answering rows of a
 * resource, a scalar's JSON, or nothing.
 */
import { KINDS } from '../field-kinds.ts';
import { JSON_MEDIA, OBJECT_MEDIA } from '../media-types.ts';
import type { RegistryFunction } from '../registry/functions.ts';
import { errors, type Json, ref, requestId } from './components.ts';

/** What the call answers with. */
function answer(fn: RegistryFunction): Json {
  const { returns } = fn;
  if (returns.kind === 'void')
    return { 204: { description: 'No Content: the function returns nothing.', headers: requestId } };
  const one =
    returns.kind === 'rows' ? ref('schemas', returns.resource.name) : KINDS[returns.type.kind].jsonSchema(returns.type);
  const schema = returns.set ? { type: 'array', items: one } : one;
  const content =
    returns.kind === 'rows' && returns.set
      ? { [JSON_MEDIA]: { schema }, [OBJECT_MEDIA]: { schema: one } }
      : { [JSON_MEDIA]: { schema } };
  return { 200: { description: 'OK', headers: requestId, content } };
}

export function functionPathItem(fn: RegistryFunction): Json {
  const schemaOf = (a: RegistryFunction['args'][number]) => KINDS[a.type.kind].jsonSchema(a.type);
  const responses = { ...answer(fn), ...errors(400, 401), 404: { description: 'Not Found', headers: requestId } };
  const common = { tags: [`rpc/${fn.name}`], ...(fn.description && { description: fn.description }) };
  const post = {
    ...common,
    operationId: `call_${fn.name}`,
    summary: `Call ${fn.name}`,
    requestBody: {
      required: fn.args.some((a) => !a.optional),
      content: {
        [JSON_MEDIA]: {
          schema: {
            type: 'object',
            additionalProperties: false,
            properties: Object.fromEntries(fn.args.map((a) => [a.name, schemaOf(a)])),
            required: fn.args.filter((a) => !a.optional).map((a) => a.name),
          },
        },
      },
    },
    responses,
  };
  if (!fn.readOnly) return { post };
  const get = {
    ...common,
    operationId: `get_${fn.name}`,
    summary: `Call ${fn.name} (it changes nothing)`,
    parameters: fn.args.map((a) => ({ name: a.name, in: 'query', required: !a.optional, schema: schemaOf(a) })),
    responses,
  };
  return { get, post };
}
