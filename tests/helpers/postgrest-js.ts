/** postgrest-js, unchanged, on the app in this process (no network), recording what it sends. */
import { PostgrestClient } from '@supabase/postgrest-js';
import type { TestApp } from './app.ts';

const BASE = 'http://engage.test/api/v1';

/** A client of `app` with `token`, appending every URL it sends to `sent` (newest last). */
export function recordingClient(app: TestApp['app'], token: string, sent: string[]) {
  return new PostgrestClient(BASE, {
    headers: { Authorization: `Bearer ${token}` },
    fetch: (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.toString() : input.url;
      sent.push(url);
      return Promise.resolve(app.request(url, init));
    },
  });
}
