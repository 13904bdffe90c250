/**
 * The curl lines of the README and docs/ as requests, for the tests that run them: the options the
 * pages use, and shell words as a shell splits them. For the walkthroughs also a page's code block
 * found by its marker, and the `curl` calls of a shell block made against an app, each answered as
 * the `# <status> [body]` line under it says.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';

/** The code block under `<!-- <marker> -->` in a page of docs/. */
export function codeBlock(page: string, marker: string): string {
  const text = readFileSync(new URL(`../../docs/${page}`, import.meta.url), 'utf8');
  const comment = `<!-- ${marker} -->\n`;
  const at = text.indexOf(comment);
  const found = at < 0 ? null : /^```\w*\n([\s\S]*?)\n```/.exec(text.slice(at + comment.length));
  if (!found) throw new Error(`docs/${page} has no code block marked "${marker}"`);
  return found[1]!;
}

/** Shell words: '…' as is, "…" (its backslash escapes undone) and bare words with their $VARIABLES expanded. */
export function shellWords(line: string, vars: Readonly<Record<string, string>>): string[] {
  // `\$` is a dollar sign, not a variable.
  const expand = (text: string) =>
    text
      .replace(/(\\)?\$(\w+)/g, (whole, escaped: string | undefined, name: string) => {
        if (escaped) return whole;
        if (!(name in vars)) throw new Error(`unknown variable $${name} in: ${line}`);
        return vars[name]!;
      })
      .replace(/\\(.)/g, '$1');
  return [...line.matchAll(/'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g)].map(
    ([, single, double, bare]) => single ?? expand(double ?? bare!),
  );
}

/** The request a curl command line makes, and its `-w` format if it has one. */
export function curlRequest(command: string, vars: Readonly<Record<string, string>>) {
  const args = shellWords(command, vars).slice(1);
  const headers: Record<string, string> = {};
  const data: string[] = [];
  let method: string | undefined;
  let get = false;
  let url = '';
  let writeOut: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '-H') {
      const header = args[++i]!;
      headers[header.slice(0, header.indexOf(':'))] = header.slice(header.indexOf(':') + 1).trim();
    } else if (arg === '-d' || arg === '--data-binary') data.push(args[++i]!);
    else if (arg === '-G') get = true;
    else if (arg === '-X') method = args[++i];
    else if (arg === '-I') method = 'HEAD';
    else if (arg === '-w') writeOut = args[++i];
    else if (arg === '-o' && args[i + 1] === '/dev/null') i++;
    else if (arg === '-s') continue;
    else if (arg.startsWith('-')) throw new Error(`the test does not know curl's ${arg}: ${command}`);
    else url = arg;
  }
  if (!URL.canParse(url)) throw new Error(`no URL in: ${command}`);
  if (get && data.length) url += (url.includes('?') ? '&' : '?') + data.join('&');
  const body = !get && data.length ? data.join('&') : undefined;
  return { url, writeOut, init: { method: method ?? (body === undefined ? 'GET' : 'POST'), headers, body } };
}

/** The variables a shell block assigns (`T="…"; API=…`), those `given` standing for the reader's own. */
export function shellVariables(block: string, given: Readonly<Record<string, string>>): Record<string, string> {
  const vars: Record<string, string> = { ...given };
  for (const line of block.split('\n').filter((l) => /^\w+=/.test(l))) {
    for (const [, name, value] of line.matchAll(/(\w+)=("[^"]*"|'[^']*'|[^\s;]+)/g)) {
      if (!(name! in given)) vars[name!] = shellWords(value!, vars)[0]!;
    }
  }
  return vars;
}

export interface Call {
  readonly line: string;
  /** The URL's path and query. */
  readonly path: string;
  readonly init: RequestInit & { headers: Record<string, string> };
  readonly status: number;
  /** The body shown after the status: an array is the whole body, an object the keys that matter. */
  readonly body: unknown;
}

/** Each `curl` of a shell block (options -H, -X and -d), with the `# <status> [body]` line under it. */
export function curlCalls(block: string, vars: Readonly<Record<string, string>>): Call[] {
  const lines = block.replace(/\\\n\s*/g, '').split('\n');
  return lines.flatMap((line, i) => {
    if (!line.startsWith('curl ')) return [];
    const answer = /^# (\d{3})(?: (.*))?$/.exec(lines[i + 1] ?? '');
    if (!answer) throw new Error(`no "# <status>" line under: ${line}`);
    const { url, init } = curlRequest(line, vars);
    const { pathname, search } = new URL(url);
    return [
      {
        line,
        path: pathname + search,
        init,
        status: Number(answer[1]),
        body: JSON.parse(answer[2] || 'null'),
      },
    ];
  });
}

/** Makes a block's calls in order through `send`, each answered as the page shows. */
export async function expectCalls(
  block: string,
  vars: Readonly<Record<string, string>>,
  send: (path: string, init: RequestInit) => Response | Promise<Response>,
): Promise<void> {
  for (const call of curlCalls(block, vars)) {
    const res = await send(call.path, call.init);
    const text = await res.text();
    expect(res.status, `${call.line}\n${text}`).toBe(call.status);
    if (Array.isArray(call.body)) expect(JSON.parse(text), call.line).toEqual(call.body);
    else if (call.body) expect(JSON.parse(text), call.line).toMatchObject(call.body);
  }
}
