/**
 * Conditional requests (RFC 9110 section 13) on a record's version: the `ETag` a singular read or a
 * write of one record answers with, `If-Match` on PATCH and DELETE, `If-None-Match` on a singular
 * GET. An entity tag is the version in double quotes; the version is made by the statement
 * (compile/version.ts).
 */

/** `If-Match` or `If-None-Match`: any current version (`*`), or the entity tags listed. */
export type EntityTags =
  | { readonly any: true }
  | { readonly any: false; readonly tags: ReadonlyArray<{ readonly weak: boolean; readonly version: string }> };

const TAG = /^\s*(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"\s*(?:,|$)/;

/**
 * The entity tags of a header; null when it is absent. A list that does not parse matches nothing
 * (its valid tags before the fault are kept), so a malformed `If-Match` never lets a write through.
 */
export function parseEntityTags(header: string | null | undefined): EntityTags | null {
  if (header === undefined || header === null) return null;
  if (header.trim() === '*') return { any: true };
  const tags: Array<{ weak: boolean; version: string }> = [];
  let rest = header;
  for (let match = TAG.exec(rest); match; match = TAG.exec(rest)) {
    tags.push({ weak: match[1] !== undefined, version: match[2]! });
    rest = rest.slice(match[0].length);
    if (rest.trim() === '') break;
  }
  return { any: false, tags };
}

/** The versions `If-Match` accepts: strong comparison, so a weak tag accepts none. */
export const strongVersions = (tags: EntityTags & { any: false }): string[] =>
  tags.tags.filter((t) => !t.weak).map((t) => t.version);

/** Whether `If-None-Match` names `version`: weak comparison, so `W/"v"` names `"v"`. */
export const namesVersion = (tags: EntityTags, version: string): boolean =>
  tags.any || tags.tags.some((t) => t.version === version);

/** The `ETag` of a version. */
export const entityTag = (version: string): string => `"${version}"`;
