/** The server's router keeps each method and path's match: the same handlers and parameters as Hono's own. */
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { CachedRouter } from '../server/route-cache.ts';

/** The same routes on Hono's default router and on the cached one. */
function apps() {
  const build = (hono: Hono) => {
    hono.use('/api/*', async (c, next) => {
      await next();
      c.res.headers.set('x-middleware', 'ran');
    });
    hono.get('/api/docs', (c) => c.text('docs'));
    hono.get('/api/:resource', (c) => c.text(`get ${c.req.param('resource')}`));
    hono.post('/api/:resource', (c) => c.text(`post ${c.req.param('resource')}`));
    hono.get('/api/:resource/:id', (c) => c.text(`${c.req.param('resource')} ${c.req.param('id')}`));
    return hono;
  };
  return { plain: build(new Hono()), cached: build(new Hono({ router: new CachedRouter() })) };
}

const answer = async (app: Hono, method: string, path: string) => {
  const res = await app.request(path, { method });
  return [res.status, await res.text(), res.headers.get('x-middleware')];
};

describe('CachedRouter', () => {
  it('answers every request as the default router does, the second time as the first', async () => {
    const { plain, cached } = apps();
    const requests: Array<[string, string]> = [
      ['GET', '/api/docs'],
      ['GET', '/api/contact'],
      ['POST', '/api/contact'],
      ['GET', '/api/deal'],
      ['GET', '/api/contact/1'],
      ['GET', '/api/contact/2'],
      ['DELETE', '/api/contact'],
      ['GET', '/elsewhere'],
    ];
    for (let round = 0; round < 2; round++) {
      for (const [method, path] of requests) {
        expect(await answer(cached, method, path), `${method} ${path}`).toEqual(await answer(plain, method, path));
      }
    }
    expect(await answer(cached, 'POST', '/api/contact')).toEqual([200, 'post contact', 'ran']);
    expect(await answer(cached, 'GET', '/api/contact/2')).toEqual([200, 'contact 2', 'ran']);
  });

  it('past the thousand matches it keeps, it answers each path, the ones it let go included', async () => {
    const { cached } = apps();
    for (let id = 0; id < 1500; id++) {
      expect((await answer(cached, 'GET', `/api/contact/${id}`))[1]).toBe(`contact ${id}`);
    }
    expect((await answer(cached, 'GET', '/api/contact/0'))[1]).toBe('contact 0');
  });
});
