/**
 * Database functions served as PostgREST's `/rpc/<name>`: what a definition declares (its
 * arguments and their types, what it returns, its volatility, the argument the caller's tenant is
 * passed in), checked once against the registry's resources and tenancy.
 */
import { type ColumnType, columnType } from '../field-kinds.ts';
import type { Resource } from './index.ts';

/** An argument: its SQL type (`numeric`, `text[]`), or that and whether it may be left out (it has a default). */
export type ArgumentDefinition = string | { readonly type: string; readonly optional?: boolean };

export interface FunctionDefinition {
  /** The function's name in the database, and its path: `<mount>/rpc/<name>`. */
  readonly name: string;
  /** The arguments a caller gives, by name. */
  readonly args?: Readonly<Record<string, ArgumentDefinition>>;
  /**
   * What it returns: rows of a resource (`{ resource: 'book', set: true }`; `set: false` for one
   * row), a scalar's SQL type (`'integer'`, or `{ type: 'text', set: true }` for a set of them), or
   * `'void'`.
   */
  readonly returns:
    | string
    | { readonly resource: string; readonly set?: boolean }
    | { readonly type: string; readonly set?: boolean };
  /** As the function is declared; `volatile` (the default, PostgreSQL's) takes POST only. */
  readonly volatility?: 'immutable' | 'stable' | 'volatile';
  /**
   * In a tenanted registry, the argument the engine passes the caller's tenant in (never the
   * client); `false` for a function that every tenant shares and that reads no tenant's rows.
   */
  readonly tenantArg?: string | false;
  readonly description?: string;
}

/**
 * Typed identity: lets a function be declared as a plain object literal.
 * @example
 * defineFunction({ name: 'top_books', args: { min_rating: 'numeric' }, returns: { resource: 'book', set: true },
 *   volatility: 'stable', tenantArg: 'p_workspace' })
 */
export const defineFunction = (definition: FunctionDefinition): FunctionDefinition => definition;

export interface FunctionArgument {
  readonly name: string;
  readonly type: ColumnType;
  readonly optional: boolean;
}

export type FunctionResult =
  | { readonly kind: 'rows'; readonly resource: Resource; readonly set: boolean }
  | { readonly kind: 'scalar'; readonly type: ColumnType; readonly set: boolean }
  | { readonly kind: 'void' };

/** A function as the registry serves it. */
export interface RegistryFunction {
  readonly name: string;
  readonly args: readonly FunctionArgument[];
  readonly returns: FunctionResult;
  /** Whether GET and HEAD may call it: it changes nothing (immutable or stable). */
  readonly readOnly: boolean;
  readonly tenantArg: string | null;
  readonly description: string | undefined;
}

const refuse = (name: string, sentence: string): Error => new Error(`registry: function ${name}: ${sentence}`);

/** Each function checked: its arguments' types read, its result's resource known, its tenant passed. */
export function functionsOf(
  definitions: readonly FunctionDefinition[],
  resources: ReadonlyMap<string, Resource>,
  tenanted: boolean,
): Map<string, RegistryFunction> {
  const functions = new Map<string, RegistryFunction>();
  for (const def of definitions) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(def.name)) throw refuse(def.name, 'its name must be an identifier');
    if (functions.has(def.name)) throw refuse(def.name, 'it is defined twice');
    const args = Object.entries(def.args ?? {}).map(([name, arg]) => {
      const { type, optional = false } = typeof arg === 'string' ? { type: arg } : arg;
      return { name, type: columnType(type), optional };
    });
    if (tenanted && def.tenantArg === undefined) {
      throw refuse(
        def.name,
        "the registry is tenanted: name the argument the caller's tenant is passed in (tenantArg: 'p_tenant'), or" +
          " tenantArg: false for a function that reads no tenant's rows",
      );
    }
    const tenantArg = def.tenantArg || null;
    if (tenantArg && args.some((a) => a.name === tenantArg)) {
      throw refuse(def.name, `its tenant argument ${tenantArg} is the engine's to pass: leave it out of args`);
    }
    let returns: FunctionResult;
    if (def.returns === 'void') returns = { kind: 'void' };
    else if (typeof def.returns === 'string') returns = { kind: 'scalar', type: columnType(def.returns), set: false };
    else if ('resource' in def.returns) {
      const resource = resources.get(def.returns.resource);
      if (!resource) throw refuse(def.name, `it returns rows of ${def.returns.resource}, which is no resource`);
      returns = { kind: 'rows', resource, set: def.returns.set ?? true };
    } else returns = { kind: 'scalar', type: columnType(def.returns.type), set: def.returns.set ?? false };
    const volatility = def.volatility ?? 'volatile';
    functions.set(def.name, {
      name: def.name,
      args,
      returns,
      readOnly: volatility !== 'volatile',
      tenantArg,
      description: def.description,
    });
  }
  return functions;
}
