/**
 * The API reference page (`GET /api/v1/docs`): Swagger UI from the `swagger-ui-dist` package, its
 * assets served from node_modules by Engage itself (no CDN: it works offline), reading the OpenAPI
 * document. Loading the page, its assets and the document needs no token; the calls made from it
 * ("Try it out") carry the token pasted into its Authorize dialog. Also `GET /`, which points to
 * the API and to this page.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ApiError, contentType, JSON_MEDIA } from '@engage/engine';
import { type Context, Hono } from 'hono';
import { withServerUrl } from './openapi.ts';

const require = createRequire(import.meta.url);
const DIST = dirname(require.resolve('swagger-ui-dist/package.json'));
/** In the assets' URLs, so that a browser may keep them for good. */
const VERSION = (require('swagger-ui-dist/package.json') as { version: string }).version;

/** The files of swagger-ui-dist the page uses (and their source maps, for browser devtools). */
const ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-bundle.js.map': 'application/json',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui.css.map': 'application/json',
  'favicon-16x16.png': 'image/png',
  'favicon-32x32.png': 'image/png',
};
/** Read from disk on first use, then kept: the same bytes for the life of the process. */
const assetCache = new Map<string, Promise<Buffer>>();
const readAsset = (name: string): Promise<Buffer> => {
  let bytes = assetCache.get(name);
  if (!bytes) {
    bytes = readFile(join(DIST, name));
    bytes.catch(() => assetCache.delete(name));
    assetCache.set(name, bytes);
  }
  return bytes;
};

/** Starts Swagger UI on the element the page holds; a file, not inline, so the page's CSP allows no inline script. */
const INIT_SCRIPT = `'use strict';
(function () {
  var root = document.getElementById('swagger-ui');
  window.ui = SwaggerUIBundle({
    url: root.dataset.specUrl,
    domNode: root,
    deepLinking: true,
    // No call to validator.swagger.io: the page works offline.
    validatorUrl: null,
    // The pasted token stays in the page: it is not written to localStorage.
    persistAuthorization: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
})();
`;

/** Scripts and styles from this server only; Swagger UI sets style attributes and shows data: icons. */
const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': PAGE_CSP,
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** The request's path without `suffix` and a trailing slash: where the app is mounted, plus what precedes. */
const basePath = (c: Context, suffix: string) => {
  const path = c.req.path.replace(/\/+$/, '');
  return path.endsWith(suffix) ? path.slice(0, path.length - suffix.length) : path;
};

/**
 * The page, its script, its assets and the document it reads, mounted by server/app.ts at
 * `/api/v1/docs` ahead of the token check.
 * @example
 * app.route('/api/v1/docs', docsPage(engine.openapi()));
 */
export function docsPage(openapi: Record<string, unknown>): Hono {
  const app = new Hono();
  // Per mount prefix (one in practice): the document with its `servers` pointing at this server.
  const documents = new Map<string, string>();

  app.get('/', (c) => {
    const docs = c.req.path;
    const assets = escapeHtml(`${docs}/assets/${VERSION}`);
    const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Engage API reference</title>
<link rel="stylesheet" href="${assets}/swagger-ui.css">
<link rel="icon" type="image/png" sizes="32x32" href="${assets}/favicon-32x32.png">
<link rel="icon" type="image/png" sizes="16x16" href="${assets}/favicon-16x16.png">
</head>
<body>
<div id="swagger-ui" data-spec-url="${escapeHtml(`${docs}/openapi.json`)}"></div>
<script src="${assets}/swagger-ui-bundle.js"></script>
<script src="${escapeHtml(`${docs}/init.js`)}"></script>
</body>
</html>
`;
    return c.body(html, 200, PAGE_HEADERS);
  });

  app.get('/init.js', (c) => c.body(INIT_SCRIPT, 200, { 'Content-Type': 'text/javascript; charset=utf-8' }));

  // The document as GET /api/v1/ gives it, but calling the API where the page was loaded from
  // (the page's origin, relative URL): the configured server URL may name another host than the
  // one the browser reached, which the page's CSP and the browser's same-origin rule would refuse.
  app.get('/openapi.json', (c) => {
    const api = basePath(c, '/docs/openapi.json');
    let document = documents.get(api);
    if (document === undefined) {
      // The /v1 paths carry a server of their own, beside /api/v1: it moves with it.
      document = JSON.stringify(withServerUrl(openapi, api, { description: 'This server' }));
      documents.set(api, document);
    }
    return c.body(document, 200, { 'Content-Type': contentType(JSON_MEDIA) });
  });

  app.get(`/assets/${VERSION}/:file`, async (c) => {
    const file = c.req.param('file');
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (type === undefined) throw new ApiError('NOT_FOUND', `the docs page has no asset ${file}`);
    return c.body(new Uint8Array(await readAsset(file)), 200, {
      'Content-Type': type,
      'Cache-Control': 'public, max-age=31536000, immutable',
    });
  });

  // Not the API's token check: a missing asset is a 404 to anyone.
  app.get('/*', (c) => {
    // The page's URL with a trailing slash: its relative links would not resolve the same.
    if (c.req.path.endsWith('/docs/')) return c.redirect(c.req.path.slice(0, -1), 301);
    throw new ApiError('NOT_FOUND', `nothing is served at ${c.req.method} ${c.req.path}`);
  });

  return app;
}

/**
 * `GET /`: where things are, rather than a bare 404. JSON, or a small HTML page for a browser.
 * Links are relative to where the app is mounted.
 */
export function home(c: Context): Response {
  const root = c.req.path.replace(/\/+$/, '');
  const links = {
    api: `${root}/api/v1/`,
    docs: `${root}/api/v1/docs`,
    versioned: `${root}/v1/`,
    health: `${root}/health`,
  };
  if (prefersHtml(c.req.header('accept'))) {
    const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Engage API</title></head>
<body>
<h1>Engage API</h1>
<p>The API reference, where you can call the API with your token:
<a href="${escapeHtml(links.docs)}">${escapeHtml(links.docs)}</a></p>
<p>The API: <a href="${escapeHtml(links.api)}">${escapeHtml(links.api)}</a>
(every request needs <code>Authorization: Bearer &lt;token&gt;</code>)</p>
</body>
</html>
`;
    return c.body(html, 200, { ...PAGE_HEADERS, 'Content-Security-Policy': "default-src 'none'" });
  }
  const body = {
    message:
      `The Engage API is at ${links.api} (every request needs "Authorization: Bearer <token>"; ` +
      `GET ${links.api} is its OpenAPI document); its reference page, where you can try it, is ${links.docs}.`,
    ...links,
  };
  return c.body(JSON.stringify(body), 200, { 'Content-Type': contentType(JSON_MEDIA) });
}

/** True when the client asks for HTML (a browser) rather than JSON or anything (curl's `*\/*`). */
function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const html = accept.indexOf('text/html');
  const json = accept.indexOf('application/json');
  return html >= 0 && (json < 0 || html < json);
}
