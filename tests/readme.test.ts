/**
 * The README's examples give what they show: every `$ curl ...` line of the README, followed by
 * the output it prints, is run against the demo database a fresh `npm start` creates (seedDemo),
 * and its answer compared with that output. `…` in the output stands for text that varies (ids,
 * timestamps); rows of a request without `order=` may come in any order.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemo } from '../server/demo.ts';
import { createTestApp, type TestApp } from './helpers/app.ts';

interface Example {
  readonly line: number;
  readonly command: string;
  readonly output: string;
}

/** Each `$ curl` command (continuation lines joined) and the lines it prints, up to a blank line or comment. */
function examples(readme: string): Example[] {
  const lines = readme.split('\n');
  const found: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith('$ curl ')) continue;
    const line = i + 1;
    let command = lines[i]!.slice(2);
    while (command.endsWith('\\')) command = `${command.slice(0, -1).trimEnd()} ${lines[++i]!.trim()}`;
    const output: string[] = [];
    while (i + 1 < lines.length && !/^(\$ |#|```|$)/.test(lines[i + 1]!)) output.push(lines[++i]!);
    found.push({ line, command, output: output.join('\n') });
  }
  return found;
}

/** Shell words: single quotes verbatim, double quotes with `$VAR` expanded, bare words likewise. */
function words(command: string, vars: Record<string, string>): string[] {
  const expand = (text: string) => text.replace(/\$(\w+)/g, (_, name: string) => vars[name] ?? `$${name}`);
  const out: string[] = [];
  const pattern = /'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (const match of command.matchAll(pattern)) {
    out.push(match[1] ?? expand((match[2] ?? match[3]!).replace(/\\(.)/g, '$1')));
  }
  return out;
}

/** The request a curl command line makes (the options the README uses). */
function request(command: string, vars: Record<string, string>) {
  const args = words(command, vars).slice(1);
  const headers = new Headers();
  const data: string[] = [];
  let method: string | undefined;
  let get = false;
  let url = '';
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '-H') {
      const [name, ...value] = args[++i]!.split(':');
      headers.set(name!, value.join(':').trim());
    } else if (arg === '-d' || arg === '--data-binary') data.push(args[++i]!);
    else if (arg === '-G') get = true;
    else if (arg === '-X') method = args[++i];
    else if (arg === '-I') method = 'HEAD';
    else if (arg.startsWith('-')) throw new Error(`the README test does not know curl's ${arg}`);
    else url = arg;
  }
  if (get && data.length) url += (url.includes('?') ? '&' : '?') + data.join('&');
  const body = !get && data.length ? data.join('&') : undefined;
  return { url, init: { method: method ?? (body ? 'POST' : 'GET'), headers, body } };
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

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
/** Reads first: each example stands for a fresh demo, and a write would change what later reads show. */
const EXAMPLES = examples(README).sort(
  (a, b) =>
    Number(/ -d |-X /.test(a.command) && !/ -G /.test(a.command)) -
    Number(/ -d |-X /.test(b.command) && !/ -G /.test(b.command)),
);

let t: TestApp;
let vars: Record<string, string>;

beforeAll(async () => {
  t = await createTestApp();
  const demo = await seedDemo(t.db, t.engine);
  vars = {
    T: `Authorization: Bearer ${demo!.token}`,
    API: 'http://localhost/api/v1',
    V1: 'http://localhost/v1',
  };
});
afterAll(() => t?.drop());

describe('README examples on the demo database', () => {
  it('finds the examples', () => {
    expect(EXAMPLES.length).toBeGreaterThan(10);
  });

  it.each(EXAMPLES.map((e) => [e.line, e] as const))('README.md:%i', async (_, example) => {
    const { url, init } = request(example.command, vars);
    const res = await t.app.request(url, init);
    const text = await res.text();
    if (example.output.includes('…')) {
      // Line breaks (and a JSON array's ", \n ") are layout here, not content.
      const flat = (x: string) => x.replace(/,\s*\n\s*/g, ',').replace(/\s*\n\s*/g, '');
      expect(matchesElided(flat(text), flat(example.output)), text).toBe(true);
      return;
    }
    const json = /^[[{]/.test(example.output);
    if (!json) {
      expect(text).toBe(example.output);
      return;
    }
    const ordered = new URL(url).searchParams.has('order');
    const shown = JSON.parse(example.output);
    expect(ordered ? JSON.parse(text) : unordered(JSON.parse(text))).toEqual(ordered ? shown : unordered(shown));
  });
});
