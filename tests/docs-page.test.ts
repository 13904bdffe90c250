/**
 * The API reference page (server/docs.ts) in a real browser: headless Chromium (Debian's package,
 * driven by puppeteer-core) loads `GET /api/v1/docs` from a real server without a token, sees every
 * path of the OpenAPI document, and a "Try it out" call with a pasted token returns the caller's
 * rows. Also `GET /`, which points to the API and this page.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../server/build.ts';
import { createOrganisation, insertRows, type Organisation } from './helpers/app.ts';
import { findChromium } from './helpers/chromium.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';

let database: TestDatabase;
let server: ReturnType<typeof serve>;
let base: string;
let browser: Browser;
let org: Organisation;
/** The page's problems: console errors, CSP refusals, failed requests. */
const problems: string[] = [];

const executablePath = findChromium();

beforeAll(async () => {
  if (!executablePath) return;
  database = await createTestDatabase();
  // A configured server URL naming another host than the page's: the page still calls its own origin.
  const { app } = buildApi({ db: database.db, serverUrl: 'http://engage.invalid:3000/api/v1' });
  server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  org = await createOrganisation(database);
  await insertRows(database.db, 'campaign', org.id, [{ name: 'Spring sale' }, { name: 'Autumn launch' }]);
  const other = await createOrganisation(database);
  await insertRows(database.db, 'campaign', other.id, [{ name: 'Not yours' }]);
  browser = await puppeteer.launch({
    executablePath,
    headless: true,
    // Root in a container: no user namespaces for Chromium's sandbox, a small /dev/shm.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await database?.drop();
});

async function openDocs(): Promise<Page> {
  const page = await browser.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error}`));
  page.on('requestfailed', (request) => problems.push(`failed: ${request.url()} ${request.failure()?.errorText}`));
  const response = await page.goto(`${base}/api/v1/docs`, { waitUntil: 'load' });
  expect(response?.status()).toBe(200);
  await page.waitForSelector('.opblock-summary-path', { timeout: 20_000 });
  return page;
}

describe.skipIf(!executablePath)('the API reference page', () => {
  it('loads without a token, shows every path, and calls the API with a pasted token', async () => {
    const document = (await (await fetch(`${base}/api/v1/docs/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const paths = Object.keys(document.paths);
    expect(paths).toContain('/campaign');

    const page = await openDocs();
    const shown = await page.$$eval('.opblock-summary-path', (spans) => spans.map((s) => s.getAttribute('data-path')));
    for (const path of paths) expect(shown, `path ${path} on the page`).toContain(path);

    // Authorize: paste the token into the bearer scheme's dialog.
    await page.click('.auth-wrapper .btn.authorize');
    await page.waitForSelector('.modal-ux input');
    await page.type('.modal-ux input', org.token);
    await page.click('.modal-ux .auth-btn-wrapper .authorize');
    await page.waitForSelector('.modal-ux .auth-btn-wrapper .btn-done');
    await page.click('.modal-ux .auth-btn-wrapper .btn-done');

    // GET /campaign: expand, Try it out, Execute.
    const operation = await page.waitForSelector(
      '.opblock-get:has(> .opblock-summary .opblock-summary-path[data-path="/campaign"])',
    );
    expect(operation).not.toBeNull();
    await operation!.$eval('.opblock-summary-control', (button) => (button as HTMLElement).click());
    await page.waitForSelector('.opblock-get.is-open .try-out__btn');
    await page.click('.opblock-get.is-open .try-out__btn');
    await page.click('.opblock-get.is-open .execute');
    const status = await page.waitForSelector('.opblock-get.is-open .live-responses-table tbody .response-col_status', {
      timeout: 20_000,
    });
    expect(await status!.evaluate((cell) => cell.textContent?.trim())).toBe('200');
    const curl = await page.$eval('.opblock-get.is-open .curl-command', (el) => el.textContent ?? '');
    // Called where the page came from (not the configured engage.invalid), with the pasted token.
    expect(curl).toContain(`${base}/api/v1/campaign`);
    expect(curl).toContain(`Bearer ${org.token}`);
    const body = await page.$eval(
      '.opblock-get.is-open .live-responses-table tbody .response-col_description pre',
      (el) => el.textContent ?? '',
    );
    const rows = JSON.parse(body) as Array<{ name: string }>;
    expect(rows.map((row) => row.name).sort()).toEqual(['Autumn launch', 'Spring sale']);

    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it('serves the assets from Engage itself, cacheable, under a strict CSP', async () => {
    const page = await (await fetch(`${base}/api/v1/docs`)).text();
    const csp = (await fetch(`${base}/api/v1/docs`)).headers.get('content-security-policy');
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    const assets = [...page.matchAll(/(?:href|src)="([^"]+)"/g)].map((match) => match[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(4);
    for (const asset of assets) {
      expect(asset.startsWith('/api/v1/docs/'), asset).toBe(true);
      const res = await fetch(`${base}${asset}`);
      expect(res.status, asset).toBe(200);
      if (asset.includes('/assets/')) expect(res.headers.get('cache-control')).toContain('immutable');
    }
    const css = await fetch(`${base}${assets.find((a) => a.endsWith('.css'))}`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    const missing = await fetch(`${base}/api/v1/docs/assets/0.0.0/swagger-ui-bundle.js`);
    expect(missing.status).toBe(404);
  });

  it('points GET / to the API and to this page', async () => {
    const res = await fetch(`${base}/`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, string>;
    expect(body).toMatchObject({ api: '/api/v1/', docs: '/api/v1/docs' });
    const html = await fetch(`${base}/`, { headers: { Accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(html.headers.get('content-type')).toContain('text/html');
    expect(await html.text()).toContain('href="/api/v1/docs"');
  });
});
