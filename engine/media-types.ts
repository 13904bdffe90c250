/** The media types the API reads and writes, in one place. */
export const JSON_MEDIA = 'application/json';
/** PostgREST's single object: `Accept` it to get one object instead of an array. */
export const OBJECT_MEDIA = 'application/vnd.pgrst.object+json';
/** Rows as CSV, as PostgREST gives them (docs/contract.md section 11). */
export const CSV_MEDIA = 'text/csv';
/** A media type as a Content-Type header gives it. */
export const contentType = (media: string): string => `${media}; charset=utf-8`;

/** Server-Sent Events: a GET of a resource with changes, as a stream of them (handle/streams.ts). */
export const EVENT_STREAM_MEDIA = 'text/event-stream';
