// The example app through HTTP: its own schema, its own auth, and the engine's behaviour as the
// customer-engagement API has it (reads, embeds, writes, counts, CSV, OpenAPI, errors), with no
// workspace ever seeing another's rows.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, setUp } from './helpers.js';

let t;
let a;
let b;
before(async () => {
  t = await setUp();
  ({ a, b } = t);
});
after(() => t.tearDown());

const post = (who, path, body, prefer = 'return=representation') =>
  call(t.app, who, path, { method: 'POST', body, headers: { Prefer: prefer } });

/** Asserts the contract's error body, with the Request-Id header repeated in it. */
function assertError(res, status, code) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.json.code, code);
  assert.equal(res.json.status_code, status);
  assert.ok(res.headers.get('request-id'));
  assert.equal(res.json.request_id, res.headers.get('request-id'));
  assert.ok(!/select|from "/i.test(res.json.message), res.json.message);
}

describe('writes', () => {
  it('creates a project with a generated integer key, and a task with a Location of its composite key', async () => {
    const res = await post(a, '/api/project', { name: 'Apollo', country_code: 'CH' });
    assert.equal(res.status, 201, res.text);
    const [row] = res.json;
    assert.equal(typeof row.id, 'number');
    assert.equal(row.workspace_id, a.id);
    assert.equal(row.name, 'Apollo');
    const task = await post(a, '/api/task', { project_id: row.id, number: 7, title: 'Launch' }, 'return=headers-only');
    assert.equal(task.status, 201, task.text);
    assert.equal(task.headers.get('location'), `task?project_id=eq.${row.id}&number=eq.7`);
  });

  it('creates tasks keyed by (project_id, number), patches one (no updated_at), deletes one', async () => {
    const project = (await post(a, '/api/project', { name: 'Tasks' })).json[0];
    const created = await post(a, '/api/task', [
      { project_id: project.id, number: 1, title: 'Design', estimate_hours: null },
      { project_id: project.id, number: 2, title: 'Build', estimate_hours: 8 },
    ]);
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.length, 2);
    const patched = await call(t.app, a, `/api/task?project_id=eq.${project.id}&number=eq.1`, {
      method: 'PATCH',
      body: { done: true },
      headers: { Prefer: 'return=representation' },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(
      patched.json.map((r) => [r.number, r.done]),
      [[1, true]],
    );
    const changedKey = await call(t.app, a, `/api/task?project_id=eq.${project.id}&number=eq.1`, {
      method: 'PATCH',
      body: { number: 9 },
    });
    assertError(changedKey, 400, 'VALIDATION_FAILED');
    const deleted = await call(t.app, a, `/api/task?project_id=eq.${project.id}&number=eq.2`, { method: 'DELETE' });
    assert.equal(deleted.status, 204);
    const left = await call(t.app, a, `/api/task?project_id=eq.${project.id}&select=number`);
    assert.deepEqual(left.json, [{ number: 1 }]);
  });

  it('upserts on the composite key with Prefer: resolution=merge-duplicates', async () => {
    const project = (await post(a, '/api/project', { name: 'Upserts' })).json[0];
    await post(a, '/api/task', { project_id: project.id, number: 1, title: 'First' });
    const res = await post(
      a,
      '/api/task',
      { project_id: project.id, number: 1, title: 'Renamed' },
      'return=representation,resolution=merge-duplicates',
    );
    // 200, not 201: the upsert only updated, as PostgREST answers.
    assert.equal(res.status, 200, res.text);
    const rows = await call(t.app, a, `/api/task?project_id=eq.${project.id}&select=number,title`);
    assert.deepEqual(rows.json, [{ number: 1, title: 'Renamed' }]);
  });

  it('a body naming another workspace is refused; a reference to its project is not found', async () => {
    const theirs = (await post(b, '/api/project', { name: 'B only' })).json[0];
    assertError(await post(a, '/api/project', { name: 'Sneaky', workspace_id: b.id }), 403, 'FORBIDDEN');
    const res = await post(a, '/api/task', { project_id: theirs.id, number: 1, title: 'Into B' });
    assertError(res, 409, 'REFERENCE_NOT_FOUND');
    const unknownCountry = await post(a, '/api/project', { name: 'Nowhere', country_code: 'XX' });
    assertError(unknownCountry, 409, 'REFERENCE_NOT_FOUND');
  });

  it('a $batch makes a project and its tasks in one transaction, or nothing when one fails', async () => {
    const operations = (title) => [
      { ref: 'p', method: 'POST', path: '/project', body: { name: 'Batched' } },
      { method: 'POST', path: '/task', body: { project_id: '@{p.id}', number: 1, title: 'First of @{p.name}' } },
      { method: 'POST', path: '/task', body: { project_id: '@{p.id}', number: 2, title } },
    ];
    const ok = await post(a, '/api/$batch', { operations: operations('Second') });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(
      ok.json.results.map((r) => r.status),
      [201, 201, 201],
    );
    const failed = await post(a, '/api/$batch', { operations: operations(null) });
    assertError(failed, 400, 'VALIDATION_FAILED');
    assert.equal(failed.json.operation, 2);
    const projects = await call(t.app, a, '/api/project?name=eq.Batched&select=name,task(title)&task.order=number');
    assert.deepEqual(projects.json, [{ name: 'Batched', task: [{ title: 'First of Batched' }, { title: 'Second' }] }]);
  });

  it('the shared table is read-only here: POST is 405', async () => {
    assertError(await post(a, '/api/country', { code: 'IT', name: 'Italy' }), 405, 'METHOD_NOT_ALLOWED');
  });
});

describe('reads', () => {
  before(async () => {
    const project = (await post(a, '/api/project', { name: 'Reads', country_code: 'DE' })).json[0];
    await post(a, '/api/task', [
      { project_id: project.id, number: 1, title: 'One', estimate_hours: 3 },
      { project_id: project.id, number: 2, title: 'Two', estimate_hours: 5 },
    ]);
    await post(b, '/api/project', { name: 'Reads', country_code: 'FR' });
  });

  it('filters, orders and embeds to one (a shared country) and to many (tasks)', async () => {
    const res = await call(
      t.app,
      a,
      '/api/project?name=eq.Reads&select=name,country(name),task(number,title)&task.order=number.desc',
    );
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, [
      {
        name: 'Reads',
        country: { name: 'Germany' },
        task: [
          { number: 2, title: 'Two' },
          { number: 1, title: 'One' },
        ],
      },
    ]);
  });

  it("embeds a task's project through the composite foreign key, and aggregates", async () => {
    const res = await call(t.app, a, '/api/task?title=eq.Two&select=title,project(name)');
    assert.deepEqual(res.json, [{ title: 'Two', project: { name: 'Reads' } }]);
    const sum = await call(t.app, a, '/api/task?select=estimate_hours.sum()&title=in.(One,Two)');
    assert.deepEqual(sum.json, [{ sum: 8 }]);
  });

  it('counts with Prefer: count=exact in Content-Range', async () => {
    const res = await call(t.app, a, '/api/project?name=eq.Reads&limit=0', { headers: { Prefer: 'count=exact' } });
    assert.equal(res.headers.get('content-range'), '*/1');
  });

  it('answers CSV', async () => {
    const res = await call(t.app, a, '/api/country?order=code&select=code,name', { headers: { Accept: 'text/csv' } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/csv/);
    assert.equal(res.text, 'code,name\nCH,Switzerland\nDE,Germany\nFR,France');
  });

  it('a singular read of the shared table by its text key', async () => {
    const res = await call(t.app, b, '/api/country?code=eq.CH', {
      headers: { Accept: 'application/vnd.pgrst.object+json' },
    });
    assert.deepEqual(res.json, { code: 'CH', name: 'Switzerland' });
  });

  it("no workspace sees another's rows, embedded or counted", async () => {
    const mine = await call(t.app, b, '/api/project?name=eq.Reads&select=name,workspace_id,country(code),task(number)');
    assert.deepEqual(mine.json, [{ name: 'Reads', workspace_id: b.id, country: { code: 'FR' }, task: [] }]);
    const tasks = await call(t.app, b, '/api/task', { headers: { Prefer: 'count=exact' } });
    assert.deepEqual(tasks.json, []);
    assert.equal(tasks.headers.get('content-range'), '*/0');
    const spoofed = await call(t.app, b, `/api/project?workspace_id=eq.${a.id}`);
    assert.deepEqual(spoofed.json, []);
    const unfiltered = await call(t.app, b, '/api/task', { method: 'PATCH', body: { done: true } });
    assertError(unfiltered, 400, 'FILTER_REQUIRED');
    assert.match(unfiltered.json.message, /\?project_id=eq\.<project_id>&number=eq\.<number>/);
    const patch = await call(t.app, b, '/api/task?title=in.(One,Two)', {
      method: 'PATCH',
      body: { done: true },
      headers: { Prefer: 'count=exact' },
    });
    assert.equal(patch.status, 204, patch.text);
    const aTasks = await call(t.app, a, '/api/task?done=is.true&title=in.(One,Two)');
    assert.deepEqual(aTasks.json, []);
  });
});

describe('OpenAPI and errors', () => {
  it("GET /api and /api/ describe the host's resources, servers at the mount path", async () => {
    for (const path of ['/api', '/api/']) {
      const res = await call(t.app, a, path);
      assert.equal(res.status, 200, `${path}: ${res.text}`);
      assert.deepEqual(Object.keys(res.json.paths).sort(), ['/', '/$batch', '/country', '/project', '/task']);
      assert.equal(res.json.security, undefined);
      assert.deepEqual(res.json.servers, [{ url: '/api' }]);
      assert.ok(res.json.components.schemas.task.properties.estimate_hours);
    }
  });

  it("a bad filter, an unknown column, an unknown resource: precise 4xx in the contract's body", async () => {
    assertError(await call(t.app, a, '/api/project?id=eq.abc'), 400, 'INVALID_QUERY');
    assertError(await call(t.app, a, '/api/project?nope=eq.1'), 400, 'UNKNOWN_FIELD');
    assertError(await call(t.app, a, '/api/workspace'), 404, 'NOT_FOUND');
    assertError(await call(t.app, a, '/api/api_key'), 404, 'NOT_FOUND');
  });

  it("the host's own auth: no key or a wrong key is 401, before anything else", async () => {
    assertError(await call(t.app, null, '/api/project'), 401, 'UNAUTHORIZED');
    assertError(await call(t.app, { key: 'wrong' }, '/api/nope?bad=1'), 401, 'UNAUTHORIZED');
    assertError(await call(t.app, null, '/api/'), 401, 'UNAUTHORIZED');
  });

  it("the host's routes stay its own", async () => {
    const res = await call(t.app, null, '/health');
    assert.deepEqual(res.json, { ok: true });
  });
});

describe('a stream of changes', () => {
  it('sends the changes of the tasks a GET selects, keyed by (project_id, number), from its Change-Position', async () => {
    const project = (await post(a, '/api/project', { name: 'Streamed' })).json[0];
    const read = await call(t.app, a, `/api/task?project_id=eq.${project.id}`);
    const position = read.headers.get('change-position');
    assert.match(position, /^\d+_\d+/);
    await post(a, '/api/task', { project_id: project.id, number: 1, title: 'Between' });
    const res = await t.app.request(`/api/task?select=number,title&project_id=eq.${project.id}`, {
      headers: { 'X-Api-Key': a.key, Accept: 'text/event-stream', 'Last-Event-ID': position },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    await post(b, '/api/project', { name: 'Theirs' });
    await call(t.app, a, `/api/task?project_id=eq.${project.id}&number=eq.1`, {
      method: 'PATCH',
      body: { done: true },
    });
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    const events = [];
    let text = '';
    while (events.length < 2) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
      const blocks = text.split('\n\n');
      text = blocks.pop();
      for (const block of blocks) {
        const data = block.split('\n').find((line) => line.startsWith('data: '));
        if (data) events.push(JSON.parse(data.slice(6)));
      }
    }
    await reader.cancel();
    assert.deepEqual(events, [
      { type: 'insert', key: { project_id: project.id, number: 1 }, record: { number: 1, title: 'Between' } },
      { type: 'update', key: { project_id: project.id, number: 1 }, record: { number: 1, title: 'Between' } },
    ]);
  });
});
