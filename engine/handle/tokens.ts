/** The built-in tokens' statements, run for a host (its CLI, its admin page): tokens.ts says what they are. */
import { createToken, listTokens, revokeToken } from '../compile/tokens.ts';
import type { Tenancy } from '../registry/index.ts';
import { hashToken, newToken, type TokenInfo, type Tokens } from '../tokens.ts';
import type { Context } from './context.ts';

export function tokens(ctx: Context, table: string, tenancy: Tenancy): Tokens {
  return {
    async create(tenant, options = {}) {
      ctx.checkScope({ tenant });
      const days = options.expiresInDays;
      if (days !== undefined && !(Number.isInteger(days) && days >= 1)) {
        throw new RangeError('expiresInDays must be a whole number of days, at least 1');
      }
      const token = newToken();
      const statement = createToken(table, tenancy, {
        tenant,
        name: options.name ?? null,
        hash: hashToken(token),
        expiresInDays: days ?? null,
      });
      const [row] = await ctx.execute<{ id: string }>(statement.text, statement.params, undefined, 'token');
      return { id: row!.id, token };
    },
    async list(tenant) {
      if (tenant !== undefined) ctx.checkScope({ tenant });
      const statement = listTokens(table, tenancy, tenant ?? null);
      return ctx.execute<TokenInfo>(statement.text, statement.params, undefined, 'token');
    },
    async revoke(id) {
      const statement = revokeToken(table, id);
      const rows = await ctx.execute(statement.text, statement.params, undefined, 'token');
      return rows.length > 0;
    },
  };
}
