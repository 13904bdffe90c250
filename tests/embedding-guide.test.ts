/**
 * The README's "Embedding the engine" is the example app's code: examples/run.sh runs that app
 * from the packed engine in CI, and this test holds the guide's key lines to the app's files, so
 * the guide cannot drift from what is tested.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const squash = (text: string) => text.replace(/\s+/g, ' ');

const readme = read('README.md');
const guide = squash(readme.slice(readme.indexOf('## Embedding the engine'), readme.indexOf('## Performance')));
const example = squash(['app.js', 'server.js', 'express.js'].map((f) => read(`examples/workspaces/${f}`)).join('\n'));

describe('the embedding guide', () => {
  it.each([
    "import { createEngine, createRegistry, defineResource, unauthorized } from '@engage/engine';",
    "import { connectPostgres } from '@engage/engine/postgres';",
    "import { engageApp } from '@engage/engine/hono';",
    "defineResource({ name: 'project', table: project, verbs: ['GET', 'POST', 'PATCH', 'DELETE'], orderable: ['name'] }),",
    "{ tenant: 'workspace_id' },",
    'await engine.install();',
    "app.route('/api', engageApp",
    'if (!',
    'throw unauthorized();',
    "import { getRequestListener } from '@hono/node-server';",
    'req.url = req.originalUrl;',
    'return listener(req, res);',
  ])('shows %s, as the tested example has it', (line) => {
    expect(guide).toContain(squash(line));
    expect(example).toContain(squash(line));
  });

  it('says how to pack and install the engine, as examples/run.sh does', () => {
    expect(guide).toContain('npm pack --workspace engine');
    expect(read('examples/run.sh')).toContain('npm pack --workspace engine');
  });
});
