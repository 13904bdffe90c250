/**
 * The customer-engagement API's engine: the registry of schema/registry.ts, and built-in tokens in
 * `api_token`, each belonging to an organisation and deleted with it (docs/contract.md section 4).
 * The server, the CLI and the tests all build it here.
 */
import {
  createEngine,
  type Database,
  type Engine,
  type EngineOptions,
  type Queryable,
  type TokenInfo,
} from '@engage/engine';
import { registry } from '../schema/registry.ts';
import { organisation } from '../schema/tables.ts';
import { openapiOptions } from './openapi.ts';

export const TOKENS = { table: 'api_token', tenants: organisation } as const;

export type EngageEngineOptions = Omit<EngineOptions, 'db' | 'tokens' | 'registry'> &
  Partial<Pick<EngineOptions, 'registry'>>;

export const engageEngine = (db: Database, options: EngageEngineOptions = {}): Engine =>
  createEngine({ registry, openapi: openapiOptions(), ...options, db, tokens: TOKENS });

export interface OrganisationTokenOptions {
  readonly organisationId: string;
  readonly name?: string | undefined;
  readonly expiresInDays?: number | undefined;
}

/** A token's id and secret, and whether its organisation was created for it (it did not exist). */
export interface CreatedToken {
  readonly id: string;
  readonly token: string;
  readonly organisationCreated: boolean;
}

/** Creates a token for an organisation, and the organisation first if it does not exist yet. */
export async function createOrganisationToken(
  engine: Engine,
  db: Queryable,
  { organisationId, ...options }: OrganisationTokenOptions,
): Promise<CreatedToken> {
  const created = await db.query(
    'INSERT INTO organisation (id) VALUES ($1::uuid) ON CONFLICT (id) DO NOTHING RETURNING id',
    [organisationId],
  );
  return { ...(await engine.tokens!.create(organisationId, options)), organisationCreated: created.length > 0 };
}

/** An organisation's creation as ISO 8601 text, as JSON renders it. */
const CREATED_AT = `to_json(created_at) #>> '{}' AS created_at`;

/** A new organisation named `name`. */
async function createOrganisation(db: Queryable, name: string): Promise<Omit<OrganisationInfo, 'active_tokens'>> {
  const [created] = await db.query<Omit<OrganisationInfo, 'active_tokens'> & Record<string, unknown>>(
    `INSERT INTO organisation (name) VALUES ($1::text) RETURNING id::text AS id, name, ${CREATED_AT}`,
    [name],
  );
  return created!;
}

/** An organisation as `engage organisation list` shows it. */
export interface OrganisationInfo {
  readonly id: string;
  readonly name: string | null;
  readonly created_at: string;
  /** Its tokens neither revoked nor expired. */
  readonly active_tokens: number;
}

/** Every organisation, oldest first, with how many of its tokens are active (as the engine tells them). */
async function listOrganisations(db: Queryable, engine: Engine): Promise<OrganisationInfo[]> {
  const [organisations, tokens] = await Promise.all([
    db.query<Omit<OrganisationInfo, 'active_tokens'> & Record<string, unknown>>(
      `SELECT id::text AS id, name, ${CREATED_AT} FROM organisation ORDER BY created_at, id`,
    ),
    engine.tokens!.list(),
  ]);
  const active = new Map<string, number>();
  for (const token of tokens.filter((t) => t.active)) active.set(token.tenant, (active.get(token.tenant) ?? 0) + 1);
  return organisations.map((o) => ({ ...o, active_tokens: active.get(o.id) ?? 0 }));
}

/**
 * What the token and organisation commands do: on the database (adminOperations), or asked of the
 * server holding the embedded database through its admin channel (server/admin-socket.ts).
 */
export interface Admin {
  createOrganisation(name: string): Promise<Omit<OrganisationInfo, 'active_tokens'>>;
  createToken(input: OrganisationTokenOptions): Promise<CreatedToken>;
  /** The tokens of an organisation, or of every organisation: never the tokens themselves. */
  listTokens(organisationId?: string): Promise<TokenInfo[]>;
  /** False when there is no active token of that id. */
  revokeToken(tokenId: string): Promise<boolean>;
  listOrganisations(): Promise<OrganisationInfo[]>;
}

export function adminOperations(db: Database): Admin {
  const engine = engageEngine(db);
  return {
    createOrganisation: (name) => createOrganisation(db, name),
    createToken: (input) => createOrganisationToken(engine, db, input),
    listTokens: (organisationId) => engine.tokens!.list(organisationId),
    revokeToken: (tokenId) => engine.tokens!.revoke(tokenId),
    listOrganisations: () => listOrganisations(db, engine),
  };
}
