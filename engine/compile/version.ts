/**
 * A record's version, as text: its `updated_at` in microseconds since 1970, which every update
 * moves (compile/write.ts). What an `ETag` carries and `If-Match` compares (parse/preconditions.ts).
 */
export const version = (table: string): string => `(extract(epoch FROM ${table}."updated_at") * 1000000)::int8::text`;
