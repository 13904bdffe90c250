/**
 * The operations the API serves, as `METHOD /path`, derived from a registry and the host's routes:
 * tests that list them stay right when a resource is added (docs/adding-a-resource.md).
 */
import type { Engine, Registry } from '@engage/engine';
import { versionedRoutes } from '../../server/versioned.ts';

/** Each `/v1` route server/versioned.ts serves, once for every collection offering it. */
export function versionedOperations(registry: Registry): string[] {
  const paging = registry.resources.filter((r) => r.keyset).map((r) => r.collection!);
  const importing = registry.resources.filter((r) => r.imports).map((r) => r.collection!);
  const app = versionedRoutes({ engine: {} as Engine, imports: undefined, webhooks: undefined, fileLimit: undefined });
  const served = app.routes.flatMap(({ method, path }) => {
    const at = path.replace(':id', '{id}');
    if (!at.includes(':collection')) return [`${method} /v1${at}`];
    const collections = at === '/:collection' ? paging : importing;
    return collections.map((c) => `${method} /v1${at.replace(':collection', c)}`);
  });
  return [...new Set(served)].sort();
}

/**
 * `GET /` (the OpenAPI document), each resource's verbs with HEAD beside GET, `POST /$batch`, and the
 * `/v1` routes.
 */
export function apiOperations(registry: Registry): string[] {
  const resources = registry.resources.flatMap((r) =>
    [...r.verbs].flatMap((verb) => (verb === 'GET' ? ['GET', 'HEAD'] : [verb]).map((m) => `${m} /${r.name}`)),
  );
  return ['GET /', ...resources, 'POST /$batch', ...versionedOperations(registry)].sort();
}
