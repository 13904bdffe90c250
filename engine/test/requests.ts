/** Requests as a host hands them to the engine, and their responses with JSON bodies parsed. */
import type { Scope } from '../compile/scope.ts';
import type { Engine } from '../engine.ts';
import type { RawRequest } from '../parse/index.ts';

export interface RequestOptions {
  readonly method?: string;
  /** A JSON body, sent as it is when a string. */
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A request of `resource` with the query string `query` (JSON bodies unless a header says otherwise). */
export function request(resource: string, query = '', options: RequestOptions = {}): RawRequest {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
  const { body } = options;
  return {
    method: options.method ?? (body === undefined ? 'GET' : 'POST'),
    resource,
    query,
    header: (name) => headers[name.toLowerCase()] ?? null,
    body: body === undefined ? null : typeof body === 'string' ? body : JSON.stringify(body),
  };
}

export interface JsonResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  // biome-ignore lint/suspicious/noExplicitAny: what a test reads of a JSON body
  readonly body: any;
}

/** The engine's response to `raw`, its body parsed; a thrown ApiError as its status and code. */
export async function send(engine: Engine, raw: RawRequest, scope?: Scope): Promise<JsonResponse> {
  try {
    const res = await engine.handle(raw, scope);
    const json = res.body !== null && (res.headers['Content-Type'] ?? '').includes('json');
    return { status: res.status, headers: res.headers, body: json ? JSON.parse(res.body!) : res.body };
  } catch (error) {
    const { status, headers, code, message, hint, details, context } = engine.asApiError(error);
    return { status, headers, body: { code, message, hint, details, context } };
  }
}
