/**
 * The boundaries of docs/architecture.md, checked in CI (`npm run boundaries`). Paths are those
 * of the files imported, `@engage/engine` resolved through tsconfig.json's paths to its entry points.
 */
const APP = '^(server|scripts|imports|webhooks|background|schema|bench|examples)/';
const ENTRY_POINTS = '^engine/(index|postgres|pglite)\\.ts$|^engine/hono/index\\.ts$';

module.exports = {
  forbidden: [
    {
      name: 'app-through-entry-points',
      comment: 'The application and hosts reach the engine through its entry points only, by package name.',
      severity: 'error',
      from: { path: APP },
      to: { path: '^engine/', pathNot: ENTRY_POINTS },
    },
    {
      name: 'app-by-package-name',
      comment: 'The application imports the engine as @engage/engine, never by a relative path.',
      severity: 'error',
      from: { path: APP },
      to: { path: '^engine/', dependencyTypesNot: ['aliased-tsconfig-paths'] },
    },
    {
      name: 'engine-names-no-app',
      comment: 'The engine is generic: it imports nothing of the application, its tests or its examples.',
      severity: 'error',
      from: { path: '^engine/' },
      to: { path: '^(server|scripts|imports|webhooks|background|schema|bench|examples|tests)/' },
    },
    {
      name: 'parse-knows-no-database',
      comment: 'Parsing reads the request alone: nothing of the database port.',
      severity: 'error',
      from: { path: '^engine/parse/' },
      to: { path: '^engine/(db|compile|handle|hono)/' },
    },
    {
      name: 'plan-compile-run-nothing',
      comment: 'Plans and statements are built without running anything: the database port is for handle/.',
      severity: 'error',
      from: { path: '^engine/(plan|compile)/' },
      to: { path: '^engine/(db|handle|hono)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'engine-core-is-http-agnostic',
      comment: 'Only the Hono adapter (and the tests that host the engine) know Hono.',
      severity: 'error',
      from: { path: '^engine/', pathNot: '^engine/(hono|test)/' },
      to: { path: '^node_modules/hono/|^engine/hono/' },
    },
    {
      name: 'drivers-in-their-adapters',
      comment:
        'postgres.js and PGlite are reached only by their adapters (and the tests that make databases), so the main' +
        ' entry point needs neither.',
      severity: 'error',
      from: { path: '^engine/', pathNot: '^engine/db/(postgres|pglite)\\.ts$|^engine/test/' },
      to: { path: '^node_modules/(postgres|@electric-sql/pglite)/' },
    },
    {
      name: 'imports-behind-its-facade',
      comment: 'The imports module is used through imports/index.ts.',
      severity: 'error',
      from: { path: '^(server|scripts)/' },
      to: { path: '^imports/', pathNot: '^imports/index\\.ts$' },
    },
    {
      name: 'webhooks-behind-its-facade',
      comment: 'The webhooks module is used through webhooks/index.ts.',
      severity: 'error',
      from: { path: '^(server|scripts)/' },
      to: { path: '^webhooks/', pathNot: '^webhooks/index\\.ts$' },
    },
    {
      name: 'background-serves-the-modules',
      comment: 'background/ holds what the feature modules share, and knows none of them.',
      severity: 'error',
      from: { path: '^background/' },
      to: { path: '^(server|scripts|imports|webhooks|schema)/' },
    },
    {
      name: 'no-circular',
      comment: 'Modules that need each other at run time are one module; types may go both ways.',
      severity: 'error',
      from: { path: '^(engine|server|imports|webhooks|background|schema)/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(engine/dist|dist|bench/node_modules)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
