/**
 * The customer-engagement API's engine: the registry of schema/registry.ts, and built-in tokens in
 * `api_token`, each belonging to an organisation and deleted with it (docs/contract.md section 4).
 * The server, the CLI and the tests all build it here.
 */
import { createEngine, type Database, type Engine, type EngineOptions, type Queryable } from '@engage/engine';
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

/** Creates a token for an organisation, and the organisation first if it does not exist yet. */
export async function createOrganisationToken(
  engine: Engine,
  db: Queryable,
  { organisationId, ...options }: OrganisationTokenOptions,
): Promise<{ id: string; token: string }> {
  await db.query('INSERT INTO organisation (id) VALUES ($1::uuid) ON CONFLICT (id) DO NOTHING', [organisationId]);
  return engine.tokens!.create(organisationId, options);
}
