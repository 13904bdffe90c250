#!/usr/bin/env node
// The `engage` command (scripts/engage.ts): the TypeScript runs through tsx, a runtime dependency,
// so `npx engage …` works on a fresh clone after `npm install`, with no build first. The project's
// tsconfig.json maps `@engage/engine` to the engine's source, from whatever directory it is run.
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
await import('../scripts/engage.ts');
