/** How the API's statements are scoped, for tests that compile statements themselves. */
import type { Scoping } from '../../engine/compile/scope.ts';
import { registry } from '../../schema/registry.ts';
import { TOKENS } from '../../server/engine.ts';

export const SCOPING: Scoping = { tenancy: registry.tenant, tokens: TOKENS.table };
