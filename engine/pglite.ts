/**
 * `@engage/engine/pglite`: the database port on PGlite, PostgreSQL compiled to WebAssembly, in a
 * directory or in memory: nothing to install, for development, tests and small deployments.
 * @example
 * import { openPglite } from '@engage/engine/pglite';
 * const db = await openPglite('.data'); // or openPglite() in memory
 */
export { openPglite } from './db/pglite.ts';
