/**
 * The examples of the README and of docs/ give what they show. Every `$ curl ...` line, followed by
 * the output it prints, is run against the demo data a fresh `npm start` creates, and its answer
 * compared with that output: a page's examples in the order printed on one demo, and each alone on
 * a demo of its own, so none depends on what another wrote. `$ NAME=$(curl ... | tail -n 1)` lines
 * set the placeholders the examples use. `…` in an output stands for text that varies (ids,
 * timestamps); rows of a request without `order=` may come in any order.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemo } from '../server/demo.ts';
import { createTestApp, type TestApp } from './helpers/app.ts';
import { curlRequest } from './helpers/curl.ts';

interface Example {
  readonly line: number;
  readonly command: string;
  readonly output: string;
  /** Set for a placeholder's line: the variable its command's output goes into, and how it is taken. */
  readonly sets?: string;
  readonly take?: string;
}

/** `NAME=$(curl ... | tail -n 1)` (a CSV's last line) or `NAME=$(curl ... | jq -r .key)` (a JSON object's key). */
const PLACEHOLDER = /^(\w+)=\$\((curl .*) \| (tail -n 1|jq -r \.\w+)\)$/;

/** Each `$ curl` command (continuation lines joined) and the lines it prints, up to a blank line or comment. */
function examples(page: string): Example[] {
  const lines = page.split('\n');
  const found: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith('$ ')) continue;
    const line = i + 1;
    let command = lines[i]!.slice(2);
    while (command.endsWith('\\')) command = `${command.slice(0, -1).trimEnd()} ${lines[++i]!.trim()}`;
    const placeholder = PLACEHOLDER.exec(command);
    if (placeholder) {
      found.push({ line, command: placeholder[2]!, output: '', sets: placeholder[1]!, take: placeholder[3]! });
      continue;
    }
    if (!command.startsWith('curl ')) throw new Error(`line ${line}: the example test runs only curl, not ${command}`);
    const output: string[] = [];
    while (i + 1 < lines.length && !/^(\$ |#|```|$)/.test(lines[i + 1]!)) output.push(lines[++i]!);
    found.push({ line, command, output: output.join('\n') });
  }
  return found;
}

/** Whether `actual` is `shown`, where `…` in `shown` stands for any text. */
function matchesElided(actual: string, shown: string): boolean {
  const parts = shown.split('…').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[\\s\\S]*?')}$`).test(actual);
}

/** JSON arrays compared without their order (a request without `order=`), recursively. */
const unordered = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(unordered).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
    : value && typeof value === 'object'
      ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unordered(v)]))
      : value;

const PAGES = ['README.md', ...readdirSync(new URL('../docs', import.meta.url)).map((f) => `docs/${f}`)]
  .map((path) => ({ path, examples: examples(readFileSync(new URL(`../${path}`, import.meta.url), 'utf8')) }))
  .filter((page) => page.examples.length > 0);

/** curl's `-w` text: `%{http_code}`, `%header{name}` and `\n` are the ones the pages use. */
function written(format: string, res: Response): string {
  return format
    .replace(/%\{http_code\}/g, String(res.status))
    .replace(/%header\{([\w-]+)\}/g, (_, name: string) => res.headers.get(name) ?? '')
    .replace(/\\n/g, '\n');
}

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.drop());

/** The variables a reader sets from the quick path, on a demo of its own. */
async function freshDemo(): Promise<Record<string, string>> {
  const demo = await createDemo(t.db, t.engine);
  return { T: `Authorization: Bearer ${demo.token}`, API: 'http://localhost/api/v1', V1: 'http://localhost/v1' };
}

/** Runs one example; a placeholder's line sets its variable, any other is checked against its output. */
async function run(example: Example, vars: Record<string, string>): Promise<void> {
  const { url, writeOut, init } = curlRequest(example.command, vars);
  const res = await t.app.request(url, init);
  const text = writeOut === undefined ? await res.text() : written(writeOut, res).trimEnd();
  if (example.sets) {
    expect(res.ok, text).toBe(true);
    const key = /^jq -r \.(\w+)$/.exec(example.take!)?.[1];
    vars[example.sets] = key ? String(JSON.parse(text)[key]) : text.split('\n').at(-1)!;
    return;
  }
  if (example.output.includes('…')) {
    // Line breaks (and a JSON array's ", \n ") are layout here, not content.
    const flat = (x: string) => x.replace(/,\s*\n\s*/g, ',').replace(/\s*\n\s*/g, '');
    expect(matchesElided(flat(text), flat(example.output)), text).toBe(true);
    return;
  }
  if (!/^[[{]/.test(example.output)) {
    expect(text).toBe(example.output);
    return;
  }
  const ordered = new URL(url).searchParams.has('order');
  const shown = JSON.parse(example.output);
  expect(ordered ? JSON.parse(text) : unordered(JSON.parse(text))).toEqual(ordered ? shown : unordered(shown));
}

it('finds the examples of every page that shows requests', () => {
  const counts = Object.fromEntries(PAGES.map((p) => [p.path, p.examples.filter((e) => !e.sets).length]));
  for (const path of ['README.md', 'docs/query-language.md', 'docs/writes.md', 'docs/v1.md', 'docs/errors.md']) {
    expect(counts[path], path).toBeGreaterThan(0);
  }
});

describe.each(PAGES)('$path', ({ path, examples }) => {
  describe('in the order printed, on one demo', () => {
    let vars: Record<string, string>;
    beforeAll(async () => {
      vars = await freshDemo();
    });
    it.each(examples.map((e) => [e.line, e] as const))(`${path}:%i`, (_, example) => run(example, vars));
  });

  describe('each alone, on a demo of its own', () => {
    const shown = examples.filter((e) => !e.sets);
    it.each(shown.map((e) => [e.line, e] as const))(`${path}:%i`, async (_, example) => {
      const vars = await freshDemo();
      for (const placeholder of examples.filter((e) => e.sets && e.line < example.line)) await run(placeholder, vars);
      await run(example, vars);
    });
  });
});
