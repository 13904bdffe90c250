/**
 * The OpenAPI document passes Redocly's linter (what `redocly lint` runs) with its recommended
 * rules and no errors, for the real registry and one without the versioned API's collections.
 * The one warning left is info-license: the API declares no licence.
 */
import { buildOpenApi, createRegistry } from '@engage/engine';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { registry as appRegistry, registryOptions, resources } from '../schema/registry.ts';
import { openapiOptions } from '../server/openapi.ts';

const ALLOWED_WARNINGS = ['info-license'];

async function lint(document: unknown) {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: '/openapi.json', config });
  return problems.map((p) => ({
    severity: p.severity,
    rule: p.ruleId,
    message: p.message,
    at: p.location[0]?.pointer,
  }));
}

describe('redocly lint (recommended rules)', () => {
  const registries = {
    'the real registry': appRegistry,
    'a registry without /v1 collections': createRegistry(
      resources.map(({ collection: _, keyset: __, imports: ___, ...r }) => r),
      registryOptions,
    ),
  };
  for (const [label, registry] of Object.entries(registries)) {
    it(`finds no errors and no warnings but ${ALLOWED_WARNINGS.join(', ')} (${label})`, async () => {
      const problems = await lint(buildOpenApi(registry, openapiOptions('http://127.0.0.1:3000/api/v1')));
      expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
      expect(problems.filter((p) => !ALLOWED_WARNINGS.includes(p.rule))).toEqual([]);
    }, 30_000);
  }

  it('finds nothing more in the document of an engine with a rate limit (429 everywhere)', async () => {
    const problems = await lint(
      buildOpenApi(appRegistry, { ...openapiOptions('http://127.0.0.1:3000/api/v1'), rateLimit: true }),
    );
    expect(problems.filter((p) => !ALLOWED_WARNINGS.includes(p.rule))).toEqual([]);
  }, 30_000);

  it('notices a broken document', async () => {
    const document = buildOpenApi(appRegistry, openapiOptions()) as { paths: Record<string, Record<string, unknown>> };
    const broken = { ...document, paths: { ...document.paths, '/nope': { get: { responses: {} } } } };
    const problems = await lint(broken);
    expect(problems.filter((p) => p.severity === 'error').map((p) => p.rule)).toContain('operation-summary');
  }, 30_000);
});
