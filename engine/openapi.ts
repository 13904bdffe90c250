/** OpenAPI 3.1 document generated from the registry. (Being written.) */
import type { Registry } from './registry.ts';

export interface OpenApiOptions {
  /** Server URL the document names, e.g. http://127.0.0.1:3000/api/v1 */
  readonly serverUrl?: string;
}

export function buildOpenApi(registry: Registry, options: OpenApiOptions = {}): Record<string, unknown> {
  return { openapi: '3.1.0', info: { title: 'API', version: '1.0.0' }, servers: options.serverUrl ? [{ url: options.serverUrl }] : [], paths: Object.fromEntries(registry.resources.map((r) => [`/${r.name}`, {}])) };
}
