/**
 * TypeScript types of the API, generated from the registry in the shape postgrest-js (and
 * supabase-js) take as their `Database` type parameter, so a client infers the rows of a typed
 * query: `new PostgrestClient<Database>(url).from('deal').select('name, contact(display_name)')`.
 *
 * Each resource is a table of schema `public`: `Row` is what a read returns, `Insert` what a POST
 * takes, `Update` what a PATCH takes, `Relationships` the registry's to-one relations read from the
 * referencing side (postgrest-js derives the to-many and many-to-many ones from them, as the
 * engine does). A resource without POST has `Insert: never` and one without PATCH `Update: never`,
 * so the compiler refuses the writes the API refuses. The custom-field properties of `*_details`
 * resources are not typed: their keys are data (`custom_field.key`), not schema.
 */

import { KINDS, tsLiteral } from './field-kinds.ts';
import type { Field, Registry, Resource } from './registry/index.ts';

/** The PostgREST version whose features the engine offers: spreads of to-many relations, `max-affected`. */
export const POSTGREST_VERSION = '13';

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const key = (name: string) => (IDENTIFIER.test(name) ? name : JSON.stringify(name));
function fieldType(field: Field): string {
  const base = field.enum ? field.enum.map(tsLiteral).join(' | ') : KINDS[field.kind].typescript(field.type);
  return field.nullable ? `${base} | null` : base;
}

/** A field a POST may leave out: the database or the server fills it in. */
const optionalOnInsert = (field: Field) =>
  field.nullable || field.serverManaged || field.defaultValue !== undefined || field.defaultSql !== undefined;

const indent = (lines: string[], depth: number) => lines.map((line) => `${'  '.repeat(depth)}${line}`);

function objectType(entries: string[], depth: number): string {
  if (entries.length === 0) return '{ [_ in never]: never }';
  return ['{', ...indent(entries, depth + 1), `${'  '.repeat(depth)}}`].join('\n');
}

function comment(field: Field): string[] {
  return field.description ? [`/** ${field.description.replace(/\*\//g, '* /')} */`] : [];
}

function rowType(resource: Resource, depth: number): string {
  return objectType(
    resource.fields.flatMap((f) => [...comment(f), `${key(f.name)}: ${fieldType(f)};`]),
    depth,
  );
}

function insertType(resource: Resource, depth: number): string {
  if (!resource.verbs.has('POST')) return 'never';
  return objectType(
    resource.fields.map((f) => `${key(f.name)}${optionalOnInsert(f) ? '?' : ''}: ${fieldType(f)};`),
    depth,
  );
}

function updateType(resource: Resource, depth: number): string {
  if (!resource.verbs.has('PATCH')) return 'never';
  // A key cannot be changed; a PATCH naming one of its fields is refused.
  return objectType(
    resource.fields.filter((f) => !resource.key.includes(f)).map((f) => `${key(f.name)}?: ${fieldType(f)};`),
    depth,
  );
}

/**
 * The to-one relations of a readable resource, read from the side holding the reference: what
 * postgrest-js calls a relationship. Their reverse (to many, or to one when the reference is
 * unique) and the many-to-many relations through a junction it derives itself, as the engine does.
 */
function relationshipsType(resource: Resource, depth: number): string {
  if (!resource.verbs.has('GET')) return '[]';
  const forward = resource.relations.filter((r) => r.via === 'parent');
  if (forward.length === 0) return '[]';
  const entries = forward.map((relation) => {
    const unique = resource.references.find((r) => r.name === relation.foreignKey)?.unique ?? false;
    return objectType(
      [
        `foreignKeyName: ${tsLiteral(relation.foreignKey)};`,
        `columns: [${relation.parentFields.map(tsLiteral).join(', ')}];`,
        `isOneToOne: ${unique};`,
        `referencedRelation: ${tsLiteral(relation.target.name)};`,
        `referencedColumns: [${relation.targetFields.map(tsLiteral).join(', ')}];`,
      ],
      depth + 1,
    );
  });
  return ['[', ...entries.map((e) => `${'  '.repeat(depth + 1)}${e},`), `${'  '.repeat(depth)}]`].join('\n');
}

function tableType(resource: Resource, depth: number): string {
  const notes = [
    resource.description,
    resource.customFields ? 'Its custom-field properties (by custom_field.key) are not typed here.' : undefined,
    `Verbs: ${[...resource.verbs].join(', ')}.`,
  ].filter(Boolean);
  return [
    `/** ${notes.join(' ').replace(/\*\//g, '* /')} */`,
    `${key(resource.name)}: ${objectType(
      [
        `Row: ${rowType(resource, depth + 1)};`,
        `Insert: ${insertType(resource, depth + 1)};`,
        `Update: ${updateType(resource, depth + 1)};`,
        `Relationships: ${relationshipsType(resource, depth + 1)};`,
      ],
      depth,
    )};`,
  ].join(`\n${'  '.repeat(depth)}`);
}

const HELPERS = `
type PublicSchema = Database['public'];

/** The rows a read of \`name\` returns: \`Tables<'deal'>\`. */
export type Tables<Name extends keyof PublicSchema['Tables']> = PublicSchema['Tables'][Name]['Row'];
/** What a POST to \`name\` takes. */
export type TablesInsert<Name extends keyof PublicSchema['Tables']> = PublicSchema['Tables'][Name]['Insert'];
/** What a PATCH of \`name\` takes. */
export type TablesUpdate<Name extends keyof PublicSchema['Tables']> = PublicSchema['Tables'][Name]['Update'];

type Resource = keyof PublicSchema['Tables'] & string;
/**
 * One operation of a batch (\`POST /$batch\`): a request the API serves. \`@{ref.field}\` in its path or a
 * body string is a field of the one row the operation named \`ref\` wrote or read.
 */
export type BatchOperation = {
  ref?: string;
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: \`/\${Resource}\` | \`/\${Resource}?\${string}\` | \`/rpc/\${string}\`;
  headers?: Record<string, string>;
  body?: Json;
};
/** A batch's answer: each operation's as it would have answered alone. */
export type BatchResults = { results: Array<{ status: number; headers: Record<string, string>; body: Json }> };
`;

/**
 * The module text: `Json`, `Database`, the helpers `Tables`, `TablesInsert` and `TablesUpdate`, and
 * a batch's `BatchOperation` and `BatchResults`.
 * @example
 * writeFileSync('engage-types.ts', typescriptTypes(createRegistry(resources)));
 */
export function typescriptTypes(registry: Registry): string {
  const tables = registry.resources.map((r) => tableType(r, 3));
  const none = '{ [_ in never]: never };';
  return [
    '/**',
    ' * Types of the API for postgrest-js and supabase-js, generated from its registry: do not edit.',
    ' * @example',
    " * const client = new PostgrestClient<Database>('https://api.example.com/rest', { headers });",
    ` * const { data } = await client.from(${tsLiteral(registry.resources[0]?.name ?? 'resource')}).select('*');`,
    ' */',
    '',
    'export type Json = string | number | boolean | null | { [key: string]: Json | undefined } | Json[];',
    '',
    'export type Database = {',
    '  /** The PostgREST features the API offers, as postgrest-js reads them. */',
    `  __InternalSupabase: { PostgrestVersion: ${tsLiteral(POSTGREST_VERSION)} };`,
    '  public: {',
    '    Tables: {',
    ...tables.map((t) => `      ${t}`),
    '    };',
    `    Views: ${none}`,
    `    Functions: ${none}`,
    `    Enums: ${none}`,
    `    CompositeTypes: ${none}`,
    '  };',
    '};',
    HELPERS,
  ].join('\n');
}
