/**
 * Hono's router with the match of each method and path kept: a request of a path seen before finds
 * its handlers without the trie search, which collects, sorts and allocates on every request.
 */
import type { Result, Router } from 'hono/router';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { SmartRouter } from 'hono/router/smart-router';
import { TrieRouter } from 'hono/router/trie-router';

/** How many method-and-path matches are kept; the oldest goes first. */
const KEPT = 1000;

export class CachedRouter<T> implements Router<T> {
  readonly name = 'CachedRouter';
  /** Hono's default: RegExpRouter when it takes every route, else TrieRouter. */
  readonly #router: Router<T> = new SmartRouter<T>({ routers: [new RegExpRouter(), new TrieRouter()] });
  readonly #matches = new Map<string, Result<T>>();

  add(method: string, path: string, handler: T): void {
    this.#matches.clear();
    this.#router.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    const key = `${method} ${path}`;
    let result = this.#matches.get(key);
    if (result === undefined) {
      result = this.#router.match(method, path);
      if (this.#matches.size >= KEPT) this.#matches.delete(this.#matches.keys().next().value!);
      this.#matches.set(key, result);
    }
    return result;
  }
}
