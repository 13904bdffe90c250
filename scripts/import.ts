/**
 * `engage import <file>` (docs/operations.md, "Importing a file"): a large import through the running
 * server's API (docs/v1.md): uploads the file (POST /v1/files), starts the job
 * (POST /v1/<collection>/imports), follows it (GET /v1/imports/<id>) with a progress bar, and prints
 * a summary with the first errors.
 * Exits 1 when the job or any item failed (0 with --allow-failures), 2 on a usage error. With
 * --columns or --ignore-unknown the file's columns are renamed or dropped first (columns.ts).
 */
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { parse } from 'csv-parse';
import { jsonFileItems, ndjsonLines } from '../imports/index.ts';
import { localBase, serverUrl } from '../server/cli.ts';
import { type Columns, ColumnsError, parseColumns, reshape } from './columns.ts';
import { progress } from './progress.ts';

const TYPES: Record<string, string> = {
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.ndjson': 'application/x-ndjson',
  '.jsonl': 'application/x-ndjson',
};

interface JobView {
  id: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  processed: number;
  created: number;
  updated: number;
  failed: number;
  errors: Array<{ index?: number; error?: { code?: string; message?: string } }>;
  error?: string;
}

class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** How many items the file holds, for the bar's total and ETA (the server does not know before it reads). */
async function countItems(content: Buffer, type: string): Promise<number> {
  if (type === 'application/json') return jsonFileItems(content.toString('utf8')).length;
  if (type === 'application/x-ndjson') return ndjsonLines(content.toString('utf8')).length;
  let records = 0;
  const parser = parse({ relax_column_count: true, skip_empty_lines: true, bom: true });
  parser.on('readable', () => {
    while (parser.read() !== null) records++;
  });
  const done = new Promise<void>((resolve, reject) => {
    parser.on('end', resolve);
    parser.on('error', reject);
  });
  parser.end(content);
  await done;
  return Math.max(0, records - 1);
}

async function call<T>(
  base: string,
  token: string,
  method: string,
  path: string,
  body?: Buffer | string,
  type?: string,
) {
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(type ? { 'Content-Type': type } : {}) },
      // A Buffer is a Uint8Array, which fetch sends as is.
      body: body as BodyInit | undefined,
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string; errors?: Array<{ code?: string }> } }).cause;
    const code = cause?.code ?? cause?.errors?.[0]?.code ?? cause?.message ?? (error as Error).message;
    throw new CliError(`cannot reach the server at ${base} (${code}); is it running? (--url)`);
  }
  const text = await response.text();
  if (!response.ok) {
    let message = text;
    try {
      const parsed = JSON.parse(text) as { code?: string; message?: string };
      message = `${parsed.code}: ${parsed.message}`;
    } catch {}
    throw new CliError(`${method} ${path} answered ${response.status}: ${message}`);
  }
  return JSON.parse(text) as T;
}

/** `1 row`, `3 rows`. */
const rows = (n: number) => `${n} ${n === 1 ? 'row' : 'rows'}`;

/**
 * The line that ends an import: failed when the job failed or no row was imported, partly when some
 * rows failed; how many of the file's rows were imported, and what became of each.
 */
function summary(job: JobView, total: number, seconds: number): string {
  const imported = job.created + job.updated;
  const outcome =
    job.status === 'failed' || (imported === 0 && job.failed > 0)
      ? 'failed'
      : job.failed > 0
        ? 'partly succeeded'
        : 'succeeded';
  const rate = Math.round(job.processed / Math.max(seconds, 0.001));
  return (
    `Import ${job.id} ${outcome}: ${imported} of ${rows(total)} imported in ${seconds.toFixed(1)} s ` +
    `(${rate} rows/s): ${job.created} created, ${job.updated} updated, ${job.failed} failed.`
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface ItemSchema {
  properties?: Record<string, unknown>;
  'x-resource'?: string;
  'x-custom-field-entity'?: string;
}

/**
 * The keys an item of the collection may have: its resource's fields and its custom fields' keys, as
 * the server's OpenAPI document (x-resource, x-custom-field-entity) and custom_field say.
 */
async function knownKeys(base: string, token: string, collection: string): Promise<Set<string>> {
  const document = await call<{ components?: { schemas?: Record<string, ItemSchema> } }>(
    base,
    token,
    'GET',
    '/api/v1/',
  );
  const schemas = document.components?.schemas ?? {};
  const item = schemas[`${collection}.import_item`];
  if (!item) throw new CliError(`the server has no import of "${collection}" (--collection).`);
  const fields = Object.keys(schemas[item['x-resource'] ?? '']?.properties ?? {});
  const known = new Set([...Object.keys(item.properties ?? {}), ...fields]);
  const entity = item['x-custom-field-entity'];
  // Page by page: the server caps a page at its MAX_ROWS.
  for (let offset = 0; entity !== undefined; ) {
    const query = `select=key&entity=eq.${encodeURIComponent(entity)}&order=id&offset=${offset}`;
    const page = await call<Array<{ key: string }>>(base, token, 'GET', `/api/v1/custom_field?${query}`);
    if (page.length === 0) break;
    for (const { key } of page) known.add(key);
    offset += page.length;
  }
  return known;
}

/** The file to upload and its item count: as it is, or reshaped by --columns and --ignore-unknown (said on stderr). */
async function prepare(
  content: Buffer,
  type: string,
  options: { columns?: Columns; ignoreUnknown?: boolean; collection: string },
  known: () => Promise<Set<string>>,
): Promise<{ content: Buffer; total: number }> {
  if (!options.columns && !options.ignoreUnknown) return { content, total: await countItems(content, type) };
  const reshaped = reshape(
    content,
    type,
    options.columns ?? new Map(),
    options.ignoreUnknown ? { collection: options.collection, keys: await known() } : undefined,
  );
  const list = (names: readonly string[]) => names.join(', ');
  if (reshaped.renamed.length > 0)
    console.error(`Renamed columns: ${list(reshaped.renamed.map(([from, to]) => `${from} as ${to}`))}.`);
  if (reshaped.dropped.length > 0) console.error(`Dropped columns (--columns): ${list(reshaped.dropped)}.`);
  if (reshaped.ignored.length > 0)
    console.error(`Ignored columns ${options.collection} does not know (--ignore-unknown): ${list(reshaped.ignored)}.`);
  return reshaped;
}

interface ImportOptions {
  collection: string;
  url?: string;
  token?: string;
  type?: string;
  columns?: Columns;
  ignoreUnknown?: boolean;
  allowFailures?: boolean;
}

export const importCommand = () =>
  new Command('import')
    .description('import a file (CSV with a header row, JSON array or NDJSON) through the running server')
    .argument('<file>', 'the file; its type from its extension (.csv, .json, .ndjson/.jsonl) or --type')
    .option('--collection <name>', 'contacts, deals or appointments', 'contacts')
    .option('--url <url>', "the server's base URL (default: HOST and PORT's)", serverUrl)
    .option('--token <token>', 'an API token of the organisation (default: $ENGAGE_TOKEN)')
    .option('--type <media-type>', 'text/csv, application/json or application/x-ndjson', (value) => {
      if (!Object.values(TYPES).includes(value)) throw new InvalidArgumentError(`unknown type ${value}.`);
      return value;
    })
    .option(
      '--columns <mapping>',
      'rename columns (keys) before the upload: SOURCE=FIELD pairs separated by commas; SOURCE= drops the column',
      parseColumns,
    )
    .option(
      '--ignore-unknown',
      'drop the columns (keys) the collection does not know: neither a field nor a custom field',
    )
    .option('--allow-failures', 'exit 0 when some rows failed (the job itself did not)')
    .action(async (file: string, options: ImportOptions) => {
      const base = options.url ?? localBase();
      try {
        const token = options.token ?? process.env.ENGAGE_TOKEN;
        if (!token) throw new CliError('error: an API token is needed: --token or ENGAGE_TOKEN.', 2);
        const type = options.type ?? TYPES[extname(file).toLowerCase()];
        if (!type) throw new CliError(`error: cannot tell the type of ${file}: name it with --type.`, 2);
        const content = await readFile(file).catch((error: Error) => {
          throw new CliError(`cannot read ${file}: ${error.message}`);
        });
        const { content: upload, total } = await prepare(content, type, options, () =>
          knownKeys(base, token, options.collection),
        ).catch((error: Error) => {
          if (error instanceof CliError) throw error;
          if (error instanceof ColumnsError) throw new CliError(`error: ${error.message}`, 2);
          throw new CliError(`cannot read ${file} as ${type}: ${error.message}`);
        });
        const stored = await call<{ id: string }>(base, token, 'POST', '/v1/files', upload, type);
        const path = `/v1/${encodeURIComponent(options.collection)}/imports`;
        let job = await call<JobView>(
          base,
          token,
          'POST',
          path,
          JSON.stringify({ file_id: stored.id }),
          'application/json',
        );
        console.error(`Uploaded ${file} (${upload.length} bytes, ${rows(total)}); import job ${job.id}.`);
        const bar = progress(total);
        while (job.status === 'queued' || job.status === 'running') {
          await sleep(250);
          job = await call<JobView>(base, token, 'GET', `/v1/imports/${job.id}`);
          bar.update(job.processed);
        }
        bar.stop();
        console.log(summary(job, total, bar.seconds()));
        for (const e of job.errors.slice(0, 10))
          console.log(`  item ${e.index ?? '?'}: ${e.error?.code ?? 'ERROR'} ${e.error?.message ?? ''}`);
        if (job.errors.length > 10) console.log(`  … ${job.failed - 10} more failed (GET /v1/imports/${job.id}).`);
        if (job.error) console.log(`  The job failed: ${job.error}`);
        if (job.status === 'failed') process.exitCode = 1;
        else if (job.failed > 0 && !options.allowFailures) {
          console.error(`${rows(job.failed)} failed: exit code 1 (--allow-failures exits 0).`);
          process.exitCode = 1;
        }
      } catch (error) {
        if (!(error instanceof CliError)) throw error;
        console.error(error.message);
        process.exitCode = error.exitCode;
      }
    });
