/**
 * Posts one webhook: no redirects followed, an answer awaited at most `timeoutMs`, and (unless
 * private addresses are allowed) a connection only to an address that address.ts lets through,
 * checked on the very addresses the connection uses, so DNS cannot point it elsewhere after the check.
 */
import { type LookupAddress, lookup } from 'node:dns';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { REFUSED, refused } from './address.ts';

export interface PostOptions {
  readonly allowPrivate: boolean;
  readonly timeoutMs: number;
}

/** What came of a post: the endpoint's status code, or why there is none. */
export type Outcome =
  | { readonly status: number; readonly error: null }
  | { readonly status: null; readonly error: string };

class Refused extends Error {}

/** dns.lookup, failing with Refused when any address it finds is one webhooks may not reach. */
const checkedLookup: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true }, (error, found: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const bad = found.find((a) => refused(a.address));
    if (bad) return callback(new Refused(`${hostname} resolves to ${bad.address}, ${REFUSED}`), '', 0);
    if (options.all) return (callback as unknown as (e: null, all: LookupAddress[]) => void)(null, found);
    return callback(null, found[0]!.address, found[0]!.family);
  });
};

export function post(
  target: string,
  headers: Record<string, string>,
  body: string,
  options: PostOptions,
): Promise<Outcome> {
  const url = new URL(target);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!options.allowPrivate && isIP(host) && refused(host)) {
    return Promise.resolve({ status: null, error: `refused: ${host} is ${REFUSED}` });
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const requestOptions: RequestOptions = {
    method: 'POST',
    headers: {
      ...headers,
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(body)),
      'User-Agent': 'Engage-Webhooks/1',
    },
    ...(options.allowPrivate ? {} : { lookup: checkedLookup }),
  };
  return new Promise<Outcome>((resolve) => {
    const req = send(url, requestOptions, (res) => {
      // The status is the answer: the body is read and dropped.
      res.resume();
      resolve({ status: res.statusCode ?? 0, error: null });
    });
    req.setTimeout(options.timeoutMs, () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    req.on('error', (error) =>
      resolve({ status: null, error: error instanceof Refused ? `refused: ${error.message}` : error.message }),
    );
    req.end(body);
  });
}
