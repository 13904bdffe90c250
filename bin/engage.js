#!/usr/bin/env node
// The `engage` command (scripts/engage.ts): the TypeScript runs through tsx, a runtime dependency,
// so `npx engage …` works on a fresh clone after `npm install`, with no build first.
import { register } from 'tsx/esm/api';

register();
await import('../scripts/engage.ts');
